package zklock_test

import (
	"errors"
	"testing"

	"github.com/zklock/zklock"
)

// TestErrorsAsPublicTypes: every path that returns LockedError,
// WrongKindError or HolderAliveError gives the root package's type to
// errors.As, with its fields filled in.
func TestErrorsAsPublicTypes(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t)
	srv := shared(t)
	s1 := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	path := lockPath(t, "lock")
	holder, _ := zklock.NewMutex(s1, path, zklock.WithData([]byte("holder")))
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	locked := func(name string, err error) {
		t.Helper()
		var le *zklock.LockedError
		if !errors.As(err, &le) || !errors.Is(err, zklock.ErrLocked) {
			t.Fatalf("%s: %v (%T), want a *zklock.LockedError", name, err, err)
		}
		if string(le.Data) != "holder" || le.Session != s1.SessionID() || le.Holder == "" {
			t.Errorf("%s: %+v, want the holder's node, session 0x%x and data", name, le, s1.SessionID())
		}
	}
	m, _ := zklock.NewMutex(s2, path)
	locked("Mutex.TryLock", m.TryLock(ctx))
	r, _ := zklock.NewReentrantMutex(s2, path)
	locked("ReentrantMutex.TryLock", r.TryLock(ctx))

	rwPath := lockPath(t, "rw")
	w, _ := zklock.NewRWMutex(s1, rwPath, zklock.WithData([]byte("holder")))
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rw, _ := zklock.NewRWMutex(s2, rwPath)
	locked("RWMutex.TryLock", rw.TryLock(ctx))
	locked("RWMutex.TryRLock", rw.TryRLock(ctx))

	// A Mutex on the RWMutex's path: the wrong kind.
	wrong, _ := zklock.NewMutex(s2, rwPath)
	err := wrong.TryLock(ctx)
	var wk *zklock.WrongKindError
	if !errors.As(err, &wk) || !errors.Is(err, zklock.ErrWrongKind) {
		t.Fatalf("Mutex on an RWMutex's path: %v (%T), want a *zklock.WrongKindError", err, err)
	}
	if wk.Path != rwPath || wk.Found != zklock.KindRWMutexWrite || wk.Node == "" {
		t.Errorf("WrongKindError %+v, want path %s, found %s", wk, rwPath, zklock.KindRWMutexWrite)
	}

	// The other acquiring paths on the RWMutex's path: a Semaphore, an
	// Election, and a MultiLock whose part is of the wrong kind.
	sem, _ := zklock.NewSemaphore(s2, rwPath, 2)
	_, err = sem.TryAcquire(ctx, 1)
	wrongKind(t, "Semaphore.TryAcquire", err)
	el, _ := zklock.NewElection(s2, rwPath)
	_, err = el.Campaign(ctx, nil)
	wrongKind(t, "Election.Campaign", err)
	other, _ := zklock.NewMutex(s2, lockPath(t, "other"))
	ml, err := zklock.NewMultiLock(other, wrong)
	if err != nil {
		t.Fatal(err)
	}
	wrongKind(t, "MultiLock.Lock", ml.Lock(ctx))

	_, err = zklock.Break(ctx, s2, path, false)
	var ha *zklock.HolderAliveError
	if !errors.As(err, &ha) || !errors.Is(err, zklock.ErrHolderAlive) {
		t.Fatalf("Break without force: %v (%T), want a *zklock.HolderAliveError", err, err)
	}
	if string(ha.Holder.Data) != "holder" || ha.Holder.Session != s1.SessionID() {
		t.Errorf("HolderAliveError %+v, want the holder", ha.Holder)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func wrongKind(t *testing.T, name string, err error) {
	t.Helper()
	var wk *zklock.WrongKindError
	if !errors.As(err, &wk) || !errors.Is(err, zklock.ErrWrongKind) || wk.Found != zklock.KindRWMutexWrite {
		t.Errorf("%s on an RWMutex's path: %v (%T), want a *zklock.WrongKindError finding %s", name, err, err, zklock.KindRWMutexWrite)
	}
}
