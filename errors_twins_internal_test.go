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
	// rootOnly are the root's fields that only the root package sets:
	// Break (in the root) fills LockedError.Holders.
	rootOnly := map[string]bool{"LockedError.Holders": true}
	for _, pair := range [][2]any{{LockedError{}, errs.LockedError{}}, {WrongKindError{}, errs.WrongKindError{}}} {
		pub, in := reflect.TypeOf(pair[0]), reflect.TypeOf(pair[1])
		for i := 0; i < in.NumField(); i++ {
			if _, ok := pub.FieldByName(in.Field(i).Name); !ok {
				t.Errorf("%v.%s has no twin in %v", in, in.Field(i).Name, pub)
			}
		}
		for i := 0; i < pub.NumField(); i++ {
			if rootOnly[pub.Name()+"."+pub.Field(i).Name] {
				continue
			}
			f, ok := in.FieldByName(pub.Field(i).Name)
			if !ok || !f.Type.ConvertibleTo(pub.Field(i).Type) || f.Type.Kind() != pub.Field(i).Type.Kind() {
				t.Errorf("%v.%s has no twin in %v", pub, pub.Field(i).Name, in)
			}
		}
	}
	kinds := map[Kind]errs.Kind{KindMutex: errs.Mutex, KindReentrantMutex: errs.ReentrantMutex,
		KindRWMutexRead: errs.RWMutexRead, KindRWMutexWrite: errs.RWMutexWrite, KindRWMutex: errs.RWMutex,
		KindSemaphore: errs.Semaphore, KindSemaphorePermit: errs.SemaphorePermit, KindMutexSeq: errs.MutexSeq,
		KindElection: errs.Election, kindCuratorLeaderLatch: errs.LeaderLatch, kindKazooReadLock: errs.KazooReadLock}
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
	if le.Holders != nil || !errors.Is(le, ErrLocked) || errors.Is(le, ErrHolderAlive) {
		t.Errorf("a Try's LockedError %+v: Holders set or wraps ErrHolderAlive", le)
	}
	alive := &LockedError{Holder: "n", Holders: []Contender{{Path: "/p/n"}}}
	if !errors.Is(alive, ErrHolderAlive) || errors.Is(alive, ErrLocked) {
		t.Errorf("Break's LockedError wraps ErrLocked or not ErrHolderAlive: %v", alive)
	}
}
