package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Adversarial review of issue 38 item 2 (WithSequenceLayout): the two
// layouts contending on one path at the same time, on a path with enough
// other children that every sequence-layout contender walks (so it lists
// only when its walk finds no sequence-layout node). The written argument
// ("Sharing a path") is that of a default-layout node D and a
// sequence-layout node, one at least is refused before it can hold. Each
// round, contenders of both layouts Lock at once; any that holds checks
// that nobody else does.
func TestReviewSeqMixedLayoutsNeverOverlap(t *testing.T) {
	t.Parallel()
	const perLayout, rounds = 3, 25
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 2*perLayout)
	path := lockPath(t, "lock")
	cl := ss[0].Client()
	mkdirs(t, cl, path)
	for i := range 17 {
		_, err := cl.Create(ctx, fmt.Sprintf("%s/filler-%d", path, i), nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
		require.NoError(t, err)
	}
	var holding atomic.Int32
	var mu sync.Mutex
	var overlaps []string
	held := map[bool]int{}
	refused := 0
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, 2*perLayout)
		for i, s := range ss {
			seq := i%2 == 1
			var opts []zklock.Option
			if seq {
				opts = append(opts, zklock.WithSequenceLayout())
			}
			m, err := zklock.NewMutex(s, path, opts...)
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				err := m.Lock(lctx)
				var wk *zklock.WrongKindError
				switch {
				case errors.As(err, &wk):
					mu.Lock()
					refused++
					mu.Unlock()
					return
				case err != nil:
					errs <- fmt.Errorf("round %d, seq %v: %w", round, seq, err)
					return
				}
				if n := holding.Add(1); n > 1 {
					mu.Lock()
					overlaps = append(overlaps, fmt.Sprintf("round %d: %s (seq layout %v) holds beside %d others", round, zklock.NodeOf(m), seq, n-1))
					mu.Unlock()
				}
				mu.Lock()
				held[seq]++
				mu.Unlock()
				time.Sleep(time.Millisecond) // a hold, not a wait for a condition
				holding.Add(-1)
				if err := m.Unlock(ctx); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	t.Logf("held: default %d, sequence %d; refused %d", held[false], held[true], refused)
	require.Empty(t, overlaps)
	require.Empty(t, ephemeralsUnder(t, cl, path), "no node left")
	require.Positive(t, held[false]+held[true])
}

// Waiters of a walked queue leave at once, in random places, while the
// others walk past their gaps and past other children made and deleted
// meanwhile (numbers burned, wider than the walk): every waiter left holds
// in turn, alone, and nothing stays behind.
func TestReviewSeqManyLeaveWhileWalking(t *testing.T) {
	const sessions, perSession = 6, 6
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), sessions+1)
	path := lockPath(t, "lock")
	cl := ss[sessions].Client()
	holder := seqMutex(t, ss[sessions], path)
	require.NoError(t, holder.Lock(ctx))

	var holding atomic.Int32
	var overlap atomic.Bool
	type waiter struct {
		res    <-chan result
		cancel context.CancelFunc
	}
	var ws []waiter
	for i := range sessions * perSession {
		m := seqMutex(t, ss[i%sessions], path)
		wctx, cancel := context.WithCancel(ctx)
		res := async(func() error {
			if err := m.Lock(wctx); err != nil {
				return err
			}
			if holding.Add(1) > 1 {
				overlap.Store(true)
			}
			time.Sleep(time.Millisecond) // a hold, not a wait for a condition
			holding.Add(-1)
			return m.Unlock(ctx)
		})
		ws = append(ws, waiter{res, cancel})
		// Burn 20 numbers every 6 waiters: gaps wider than the walk (18).
		if i%6 == 5 {
			for range 20 {
				_, err := cl.Create(ctx, path+"/junk", nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
				require.NoError(t, err)
				require.NoError(t, cl.Delete(ctx, path+"/junk", -1))
			}
		}
	}
	eventually(t, 20*time.Second, "every waiter's node", func() bool {
		return len(seqNodes(t, ss[0], path)) == 1+sessions*perSession
	})
	left := 0
	for i, w := range ws {
		if i%3 != 2 { // two of three leave, at once
			w.cancel()
			left++
		}
	}
	require.NoError(t, holder.Unlock(ctx))
	for i, w := range ws {
		err := await(t, w.res, 30*time.Second, fmt.Sprintf("waiter %d", i)).err
		if i%3 == 2 {
			require.NoError(t, err, "waiter %d (stayed)", i)
		} else if err != nil {
			require.ErrorIs(t, err, context.Canceled, "waiter %d (left)", i)
		}
		w.cancel()
	}
	require.False(t, overlap.Load(), "two held at once")
	eventually(t, 10*time.Second, "no node left", func() bool { return len(seqNodes(t, ss[0], path)) == 0 })
	t.Logf("%d waiters, %d left", len(ws), left)
}
