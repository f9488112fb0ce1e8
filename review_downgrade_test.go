package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// rvDowngradeRace: one RWMutex handle holds the write lock, a rival writer
// of another session waits behind it, and two goroutines call Downgrade
// and Unlock at once (with bound > 0: Downgrade at about the moment the
// write lock's WithMaxHold bound passes, and no Unlock). A nil Downgrade
// must leave a live read hold: Lost open, its read node standing as the
// session's, and the rival writer not holding; a failed one leaves
// nothing of ours.
func rvDowngradeRace(t *testing.T, bound time.Duration, rounds int) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	ours := newSession(t, srv.Servers())
	rs := newSession(t, srv.Servers())
	var ok, refused int
	for i := range rounds {
		m, rival, rivalHolds, rgot := rvDowngradeRound(ctx, t, ours, rs, lockPath(t, fmt.Sprintf("lock%d", i)), bound)
		start := make(chan struct{})
		type dres struct {
			err        error
			rivalHolds bool
		}
		dgot := make(chan dres, 1)
		go func() {
			<-start
			err := m.Downgrade(ctx)
			r := dres{err: err, rivalHolds: rivalHolds.Load()}
			dgot <- r
		}()
		ugot := make(chan error, 1)
		if bound > 0 {
			// Downgrade within ±100ms of the bound.
			time.Sleep(bound - 100*time.Millisecond + time.Duration(i%10)*20*time.Millisecond)
			ugot <- nil
		} else {
			go func() {
				<-start
				time.Sleep(time.Duration(i%15) * 250 * time.Microsecond) // across Downgrade's two requests
				ugot <- m.Unlock(ctx)
			}()
		}
		close(start)
		d := <-dgot
		uerr := <-ugot
		if uerr != nil && !errors.Is(uerr, zklock.ErrLockLost) {
			t.Fatalf("round %d: Unlock: %v", i, uerr)
		}
		if bound > 0 {
			_ = m.Unlock(ctx) // the write lock, whether or not the bound passed
		}
		if d.err == nil {
			ok++
			lostNow := isClosed(m.Lost()) // the read hold is current now
			var reads []zklock.Contender
			list, err := zklock.ContendersOf(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list {
				if c.Kind == zklock.KindRWMutexRead && c.Session == ours.SessionID() {
					reads = append(reads, c)
				}
			}
			lostAfter := isClosed(m.Lost())
			switch {
			case d.rivalHolds:
				t.Errorf("round %d: Downgrade returned nil while the rival writer held", i)
			case bound == 0 && lostNow:
				t.Errorf("round %d: Downgrade returned nil, and the read hold's Lost is closed after Unlock", i)
			case len(reads) == 0 && !lostAfter:
				t.Errorf("round %d: Downgrade returned nil; no read node of ours stands, and Lost is open", i)
			}
			if bound == 0 {
				select {
				case err := <-rgot:
					t.Errorf("round %d: the rival writer's Lock returned %v while our downgraded read hold stands", i, err)
					rgot <- err
				case <-time.After(200 * time.Millisecond):
				}
			}
			_ = m.RUnlock(ctx)
		} else {
			refused++
			if !errors.Is(d.err, zklock.ErrNotLocked) && !errors.Is(d.err, zklock.ErrLockLost) {
				t.Errorf("round %d: Downgrade: %v", i, d.err)
			}
		}
		if err := <-rgot; err != nil {
			t.Fatalf("round %d: rival: %v", i, err)
		}
		rivalHolds.Store(false)
		if err := rival.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, m); return err == nil && len(cs) == 0 })
	}
	t.Logf("Downgrade succeeded %d times, refused %d times", ok, refused)
}

func TestReviewDowngradeRacesUnlock(t *testing.T) { rvDowngradeRace(t, 0, 45) }

func TestReviewDowngradeRacesMaxHold(t *testing.T) { rvDowngradeRace(t, 600*time.Millisecond, 20) }

// rvDowngradeRound is a round's set-up: our RWMutex on path (bounded by
// bound if positive) holds the write lock, and a rival writer of session
// rs waits behind it; rivalHolds is set when the rival's Lock returns nil,
// and rgot gets its error.
func rvDowngradeRound(ctx context.Context, t *testing.T, ours, rs *zklock.Session, path string, bound time.Duration) (m, rival *zklock.RWMutex, rivalHolds *atomic.Bool, rgot chan error) {
	t.Helper()
	var opts []zklock.Option
	if bound > 0 {
		opts = append(opts, zklock.WithMaxHold(bound))
	}
	m, err := zklock.NewRWMutex(ours, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rival, err = zklock.NewRWMutex(rs, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rivalHolds, rgot = new(atomic.Bool), make(chan error, 1)
	go func() {
		err := rival.Lock(ctx)
		if err == nil {
			rivalHolds.Store(true)
		}
		rgot <- err
	}()
	eventually(t, 10*time.Second, "rival queued", func() bool { cs, err := zklock.ContendersOf(ctx, m); return err == nil && len(cs) == 2 })
	return m, rival, rivalHolds, rgot
}
