package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zklock/zklock/fence"
)

// Two transactions that admit a pair of resources one by one in opposite
// orders deadlock, and PostgreSQL fails one (40P01); AdmitAll admits them
// in one order, so the second waits for the first and is admitted.
func TestAdmitAllOrdersResources(t *testing.T) {
	f, db := newFence(t, engines[0])
	ctx := testCtx(t)
	admit(t, ctx, db, f, "a", 1)
	admit(t, ctx, db, f, "b", 1)

	one, two := beginOn(t, ctx, db), beginOn(t, ctx, db)
	if err := f.Admit(ctx, one.tx, "a", 5); err != nil {
		t.Fatal(err)
	}
	if err := f.Admit(ctx, two.tx, "b", 6); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() { res <- f.Admit(ctx, one.tx, "b", 5) }()
	waitLockWait(t, ctx, db, one.pid)
	errTwo := f.Admit(ctx, two.tx, "a", 6)
	errOne := <-res
	t.Logf("one by one, in opposite orders: %v; %v", errOne, errTwo)
	if (errOne == nil) == (errTwo == nil) || !strings.Contains(fmt.Sprint(errOne, errTwo), "40P01") {
		t.Fatalf("one by one in opposite orders: %v, %v; want one deadlock (40P01)", errOne, errTwo)
	}
	if errOne == nil {
		_ = one.tx.Rollback()
	} else {
		_ = two.tx.Rollback()
	}

	one, two = beginOn(t, ctx, db), beginOn(t, ctx, db)
	if err := f.AdmitAll(ctx, one.tx, map[string]int64{"b": 7, "a": 7}); err != nil {
		t.Fatal(err)
	}
	go func() { res <- f.AdmitAll(ctx, two.tx, map[string]int64{"a": 8, "b": 8}) }()
	waitLockWait(t, ctx, db, two.pid)
	if err := one.tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatalf("AdmitAll after the other committed: %v", err)
	}
	if err := two.tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if a, b := stored(t, db, f, "a"), stored(t, db, f, "b"); a != 8 || b != 8 {
		t.Fatalf("stored a=%d b=%d, want 8 and 8", a, b)
	}

	// A refusal on one resource admits none: a's raise to 9 is rolled back
	// with the transaction when b refuses 7.
	err := f.DoAll(ctx, db, map[string]int64{"a": 9, "b": 7}, func(context.Context, *sql.Tx) error {
		t.Error("fn ran after a refusal")
		return nil
	})
	if !errors.Is(err, fence.ErrStaleToken) {
		t.Fatalf("DoAll(a 9, b 7) after 8: %v, want ErrStaleToken", err)
	}
	if a := stored(t, db, f, "a"); a != 8 {
		t.Fatalf("stored a=%d after a refusal on b, want 8", a)
	}
}

// Writers fence random subsets of three resources, listed in random
// orders, with increasing tokens: DoAll never deadlocks, a refusal names a
// higher admitted token, and each resource ends with the highest token
// admitted on it.
func TestDoAllConcurrent(t *testing.T) {
	const writers, writes = 8, 15
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx := testCtx(t)
			var next atomic.Int64
			var mu sync.Mutex
			highest := map[string]int64{}
			var admitted, refused atomic.Int32
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), 46))
					for range writes {
						names := []string{"a", "b", "c"}
						rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
						names = names[:1+rng.IntN(3)]
						token := next.Add(1)
						tokens := map[string]int64{}
						for _, n := range names {
							tokens[n] = token
						}
						err := f.DoAll(ctx, db, tokens, func(ctx context.Context, tx *sql.Tx) error {
							mu.Lock()
							defer mu.Unlock()
							for _, n := range names {
								highest[n] = max(highest[n], token)
							}
							return nil
						})
						var stale *fence.StaleTokenError
						switch {
						case err == nil:
							admitted.Add(1)
						case errors.As(err, &stale) && stale.Stored > stale.Token:
							refused.Add(1)
						default:
							t.Errorf("DoAll(%v): %v", tokens, err)
						}
					}
				})
			}
			wg.Wait()
			for _, n := range []string{"a", "b", "c"} {
				if got := stored(t, db, f, n); got != highest[n] {
					t.Errorf("%s: stored %d, highest admitted %d", n, got, highest[n])
				}
			}
			t.Logf("%d admitted, %d refused, no other error", admitted.Load(), refused.Load())
		})
	}
}
