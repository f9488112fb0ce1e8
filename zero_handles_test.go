package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zklock/zklock"
)

// zeroCall is one method of a handle its constructor did not make.
type zeroCall struct {
	name string
	call func() error
}

// TestZeroHandles: every exported acting method of a handle type's zero
// value (and of a nil Mutex, ReentrantMutex, RWMutex, Semaphore, Election,
// MultiLock, Lease) returns an error wrapping ErrInvalidArgument, as
// os.File's methods on a nil *File return os.ErrInvalid, instead of
// panicking; nothing is sent (no Session exists here).
func TestZeroHandles(t *testing.T) {
	ctx := context.Background()
	lead := func(context.Context, *zklock.Term) error { return nil }
	var calls []zeroCall
	add := func(name string, f func() error) { calls = append(calls, zeroCall{name, f}) }
	for _, nilp := range []bool{false, true} {
		kind := "zero "
		if nilp {
			kind = "nil "
		}
		mu := func() *zklock.Mutex {
			if nilp {
				return nil
			}
			return new(zklock.Mutex)
		}
		re := func() *zklock.ReentrantMutex {
			if nilp {
				return nil
			}
			return new(zklock.ReentrantMutex)
		}
		rw := func() *zklock.RWMutex {
			if nilp {
				return nil
			}
			return new(zklock.RWMutex)
		}
		sem := func() *zklock.Semaphore {
			if nilp {
				return nil
			}
			return new(zklock.Semaphore)
		}
		el := func() *zklock.Election {
			if nilp {
				return nil
			}
			return new(zklock.Election)
		}
		ml := func() *zklock.MultiLock {
			if nilp {
				return nil
			}
			return new(zklock.MultiLock)
		}
		le := func() *zklock.Lease {
			if nilp {
				return nil
			}
			return new(zklock.Lease)
		}
		add(kind+"Mutex.Lock", func() error { return mu().Lock(ctx) })
		add(kind+"Mutex.TryLock", func() error { return mu().TryLock(ctx) })
		add(kind+"Mutex.Unlock", func() error { return mu().Unlock(ctx) })
		add(kind+"ReentrantMutex.Lock", func() error { return re().Lock(ctx) })
		add(kind+"ReentrantMutex.TryLock", func() error { return re().TryLock(ctx) })
		add(kind+"ReentrantMutex.Unlock", func() error { return re().Unlock(ctx) })
		add(kind+"RWMutex.Lock", func() error { return rw().Lock(ctx) })
		add(kind+"RWMutex.TryLock", func() error { return rw().TryLock(ctx) })
		add(kind+"RWMutex.Unlock", func() error { return rw().Unlock(ctx) })
		add(kind+"RWMutex.RLock", func() error { return rw().RLock(ctx) })
		add(kind+"RWMutex.TryRLock", func() error { return rw().TryRLock(ctx) })
		add(kind+"RWMutex.RUnlock", func() error { return rw().RUnlock(ctx) })
		add(kind+"RWMutex.Downgrade", func() error { return rw().Downgrade(ctx) })
		add(kind+"Semaphore.Acquire", func() error { _, err := sem().Acquire(ctx, 1); return err })
		add(kind+"Semaphore.TryAcquire", func() error { _, err := sem().TryAcquire(ctx, 1); return err })
		add(kind+"Election.Campaign", func() error { _, err := el().Campaign(ctx, nil); return err })
		add(kind+"Election.Resign", func() error { return el().Resign(ctx) })
		add(kind+"Election.Observe", func() error { _, err := el().Observe(ctx); return err })
		add(kind+"Election.Run", func() error { return el().Run(ctx, nil, lead) })
		add(kind+"MultiLock.Lock", func() error { return ml().Lock(ctx) })
		add(kind+"MultiLock.Unlock", func() error { return ml().Unlock(ctx) })
		add(kind+"Lease.Release", func() error { return le().Release(ctx) })
	}
	// A zero handle as a MultiLock's part is refused when the MultiLock
	// is made, as a nil one is, not when it locks.
	for _, p := range []zklock.Part{new(zklock.Mutex), new(zklock.ReentrantMutex), new(zklock.RWMutex),
		new(zklock.RWMutex).ReadPart(), new(zklock.Semaphore)} {
		add(fmt.Sprintf("NewMultiLock(zero %T)", p), func() error { _, err := zklock.NewMultiLock(p); return err })
	}
	for _, c := range calls {
		err := callNoPanic(c.call)
		if !errors.Is(err, zklock.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", c.name, err)
		}
	}
}

// TestZeroHandleAccessors: the accessors of an unmade handle (a zero
// value or a nil pointer) answer as their docs say for "nothing held"
// (Lost closed, Token 0, Guard nil or the one nil check Multi refuses,
// Tokens nil), and a zero or nil Term is over: Lost closed, Err
// ErrInvalidArgument.
func TestZeroHandleAccessors(t *testing.T) {
	closed := func(name string, ch <-chan struct{}) error {
		select {
		case <-ch:
			return nil
		default:
			return fmt.Errorf("%s: Lost not closed", name)
		}
	}
	one := func(f func() error) {
		if err := callNoPanic(f); err != nil {
			t.Error(err)
		}
	}
	var nilMutex *zklock.Mutex
	for name, m := range map[string]*zklock.Mutex{"zero Mutex": new(zklock.Mutex), "nil Mutex": nilMutex} {
		one(func() error {
			if m.Token() != 0 || m.Guard() != nil {
				return fmt.Errorf("%s: Token %d, Guard %v", name, m.Token(), m.Guard())
			}
			return closed(name, m.Lost())
		})
	}
	for name, r := range map[string]*zklock.ReentrantMutex{"zero ReentrantMutex": new(zklock.ReentrantMutex), "nil ReentrantMutex": nil} {
		one(func() error {
			if r.Token() != 0 || r.Guard() != nil {
				return fmt.Errorf("%s: Token %d, Guard %v", name, r.Token(), r.Guard())
			}
			return closed(name, r.Lost())
		})
	}
	for name, m := range map[string]*zklock.RWMutex{"zero RWMutex": new(zklock.RWMutex), "nil RWMutex": nil} {
		one(func() error {
			if m.Token() != 0 || m.Guard() != nil {
				return fmt.Errorf("%s: Token %d, Guard %v", name, m.Token(), m.Guard())
			}
			return closed(name, m.Lost())
		})
	}
	for name, m := range map[string]*zklock.MultiLock{"zero MultiLock": new(zklock.MultiLock), "nil MultiLock": nil} {
		one(func() error {
			if m.Tokens() != nil || len(m.Guard()) != 1 {
				return fmt.Errorf("%s: Tokens %v, Guard %v", name, m.Tokens(), m.Guard())
			}
			return closed(name, m.Lost())
		})
	}
	for name, l := range map[string]*zklock.Lease{"zero Lease": new(zklock.Lease), "nil Lease": nil} {
		one(func() error {
			if l.Token() != 0 || len(l.Guard()) != 1 {
				return fmt.Errorf("%s: Token %d, Guard %v", name, l.Token(), l.Guard())
			}
			return closed(name, l.Lost())
		})
	}
	for name, tm := range map[string]*zklock.Term{"zero Term": new(zklock.Term), "nil Term": nil} {
		one(func() error {
			if tm.Token() != 0 || tm.Guard() != nil || !errors.Is(tm.Err(), zklock.ErrInvalidArgument) {
				return fmt.Errorf("%s: Token %d, Guard %v, Err %v", name, tm.Token(), tm.Guard(), tm.Err())
			}
			return closed(name, tm.Lost())
		})
	}
}
