package zklock

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/zklock/zklock/internal/errs"
)

// TestErrorTwins: the root's LockedError, WrongKindError and Kind mirror
// internal/errs' (errs' As fills the root's by field name), and errors.As
// finds the root's type through wrapping.
func TestErrorTwins(t *testing.T) {
	for _, pair := range [][2]any{{LockedError{}, errs.LockedError{}}, {WrongKindError{}, errs.WrongKindError{}}} {
		pub, in := reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])
		if pub.NumField() != in.NumField() {
			t.Errorf("%v has %d fields, %v %d", pub, pub.NumField(), in, in.NumField())
		}
		for i := 0; i < pub.NumField(); i++ {
			f, ok := in.FieldByName(pub.Field(i).Name)
			if !ok || !f.Type.ConvertibleTo(pub.Field(i).Type) || f.Type.Kind() != pub.Field(i).Type.Kind() {
				t.Errorf("%v.%s has no twin in %v", pub, pub.Field(i).Name, in)
			}
		}
	}
	kinds := map[Kind]errs.Kind{KindMutex: errs.Mutex, KindReentrantMutex: errs.ReentrantMutex,
		KindRWMutexRead: errs.RWMutexRead, KindRWMutexWrite: errs.RWMutexWrite, KindRWMutex: errs.RWMutex,
		KindSemaphore: errs.Semaphore, KindSemaphorePermit: errs.SemaphorePermit, KindMutexSeq: errs.MutexSeq,
		KindElection: errs.Election, KindCuratorLeaderLatch: errs.LeaderLatch, KindKazooReadLock: errs.KazooReadLock}
	for pub, in := range kinds {
		if string(pub) != string(in) {
			t.Errorf("Kind %q, internal %q", pub, in)
		}
	}
	err := fmt.Errorf("try: %w", &errs.WrongKindError{Path: "/p", Node: "locks", Found: errs.Semaphore})
	var wk *WrongKindError
	if !errors.As(err, &wk) || *wk != (WrongKindError{"/p", "locks", KindSemaphore}) || !errors.Is(err, ErrWrongKind) {
		t.Errorf("errors.As(%v) = %+v", err, wk)
	}
	err = fmt.Errorf("try: %w", &errs.LockedError{Holder: "n", Session: 7, Data: []byte("d")})
	var le *LockedError
	if !errors.As(err, &le) || le.Holder != "n" || le.Session != 7 || string(le.Data) != "d" {
		t.Errorf("errors.As(%v) = %+v", err, le)
	}
	var other *HolderAliveError
	if errors.As(err, &other) {
		t.Errorf("errors.As(LockedError, *HolderAliveError) = true")
	}
}
