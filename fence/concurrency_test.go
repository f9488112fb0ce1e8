package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/fence"
)

// Many goroutines write one resource through the fence with interleaved
// tokens: they take tokens in increasing order from one queue and race, so
// some arrive after a higher token committed; and after each admitted write
// a quarter of them write again with their token less one, which a higher
// token has then committed before. Every write is a read-modify-write of a
// counter with no lock of its own, so two admitted writes running at once
// would lose an increment. The committed writes must be in token order
// (never going down), none lost; every refusal must name a committed token
// higher than its own, and each deliberately stale write must be refused.
func TestConcurrentWritersCommitInTokenOrder(t *testing.T) {
	const writers, tokens = 16, 400
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx := testCtx(t)
			for _, ddl := range []string{
				"CREATE TABLE counter (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)",
				"INSERT INTO counter VALUES (1, 0)",
				"CREATE TABLE log (n BIGINT PRIMARY KEY, token BIGINT NOT NULL)",
			} {
				if _, err := db.ExecContext(ctx, ddl); err != nil {
					t.Fatal(err)
				}
			}
			seed := rand.Uint64()
			t.Logf("seed %d", seed)
			out := race(ctx, t, db, f, writers, tokens, seed)
			checkRace(t, ctx, db, f, out, tokens)
		})
	}
}

// raceOutcome is what the writers saw.
type raceOutcome struct {
	mu        sync.Mutex
	admitted  map[int64]bool
	refused   []fence.StaleTokenError
	lateStale int // deliberately stale writes, all of which must be refused
	lateOK    []int64
}

func race(ctx context.Context, t *testing.T, db *sql.DB, f *fence.Fence, writers, tokens int, seed uint64) *raceOutcome {
	queue := make(chan int64, tokens)
	for tok := int64(1); tok <= int64(tokens); tok++ {
		queue <- tok
	}
	close(queue)
	out := &raceOutcome{admitted: map[int64]bool{}}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for tok := range queue {
				if !write(ctx, t, db, f, tok, out) || rng.IntN(4) != 0 || tok == 1 {
					continue
				}
				out.mu.Lock()
				out.lateStale++
				out.mu.Unlock()
				if write(ctx, t, db, f, tok-1, out) {
					out.mu.Lock()
					out.lateOK = append(out.lateOK, tok-1)
					out.mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// write increments the counter under token and logs it; it reports whether
// it was admitted.
func write(ctx context.Context, t *testing.T, db *sql.DB, f *fence.Fence, token int64, out *raceOutcome) bool {
	err := f.Do(ctx, db, "counter", token, func(ctx context.Context, tx *sql.Tx) error {
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE counter SET n = $1 WHERE id = 1", n+1); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO log (n, token) VALUES ($1, $2)", n+1, token)
		return err
	})
	var stale *fence.StaleTokenError
	out.mu.Lock()
	defer out.mu.Unlock()
	switch {
	case err == nil:
		out.admitted[token] = true
		return true
	case errors.As(err, &stale):
		out.refused = append(out.refused, *stale)
	default:
		t.Errorf("write %d: %v", token, err)
	}
	return false
}

func checkRace(t *testing.T, ctx context.Context, db *sql.DB, f *fence.Fence, out *raceOutcome, tokens int) {
	t.Helper()
	rows, err := db.QueryContext(ctx, "SELECT n, token FROM log ORDER BY n")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var committed []int64
	for want := int64(1); rows.Next(); want++ {
		var n, tok int64
		if err := rows.Scan(&n, &tok); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("increment %d logged where %d belongs: an increment was lost", n, want)
		}
		if len(committed) > 0 && tok < committed[len(committed)-1] {
			t.Errorf("token %d committed after %d", tok, committed[len(committed)-1])
		}
		committed = append(committed, tok)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT n FROM counter").Scan(&n); err != nil || n != int64(len(committed)) {
		t.Errorf("counter %d (%v), %d increments logged", n, err, len(committed))
	}
	if len(committed) != len(out.admitted) || len(committed)+len(out.refused) != tokens+out.lateStale {
		t.Errorf("%d committed, %d admitted, %d refused, of %d writes", len(committed), len(out.admitted), len(out.refused), tokens+out.lateStale)
	}
	for _, r := range out.refused {
		if r.Stored <= r.Token || !out.admitted[r.Stored] {
			t.Errorf("%v: the stored token is not a higher committed one", &r)
		}
	}
	if len(out.lateOK) > 0 {
		t.Errorf("stale writes admitted after their successor committed: %v", out.lateOK)
	}
	if got := stored(t, db, f, "counter"); got != int64(tokens) || !out.admitted[int64(tokens)] {
		t.Errorf("stored %d, highest token %d admitted: %v", got, tokens, out.admitted[int64(tokens)])
	}
	t.Logf("%d writes committed in token order, %d refused (%d of them written after a higher token committed)",
		len(committed), len(out.refused), out.lateStale)
}

// PostgreSQL, step by step: the fence's row lock orders two transactions
// with tokens 5 and 7, whichever admits first and whether or not the row
// exists yet, and a rolled back admission raises nothing.
func TestPostgresRowLockOrdersRacingTokens(t *testing.T) {
	f, db := newFence(t, engines[0])
	ctx := testCtx(t)
	for _, c := range []struct {
		name        string
		seed        int64 // the row's token before, 0 for no row
		first, then int64 // the first admits and holds; the second waits for it
		rollback    bool  // the first rolls back instead of committing
		want        int64 // the second's outcome: 0 admitted, else the stored token refusing it
	}{
		{"7 holds, 5 waits and is refused", 3, 7, 5, false, 7},
		{"5 holds, 7 waits and is admitted", 3, 5, 7, false, 0},
		{"no row: 7 inserts, 5 waits and is refused", 0, 7, 5, false, 7},
		{"no row: 5 inserts, 7 waits and is admitted", 0, 5, 7, false, 0},
		{"7 rolls back, 5 is admitted", 3, 7, 5, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			resource := sanitize(c.name)
			if c.seed > 0 {
				admit(t, ctx, db, f, resource, c.seed)
			}
			first := beginOn(t, ctx, db)
			if err := f.Admit(ctx, first.tx, resource, c.first); err != nil {
				t.Fatal(err)
			}
			second := beginOn(t, ctx, db)
			res := make(chan error, 1)
			go func() { res <- f.Admit(ctx, second.tx, resource, c.then) }()
			waitLockWait(t, ctx, db, second.pid)
			end := first.tx.Commit
			if c.rollback {
				end = first.tx.Rollback
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
			err := <-res
			var stale *fence.StaleTokenError
			switch {
			case c.want == 0 && err != nil, c.want != 0 && (!errors.As(err, &stale) || stale.Stored != c.want):
				t.Fatalf("Admit(%d) after %d: %v, want stored %d (0: admitted)", c.then, c.first, err, c.want)
			}
			if err := second.tx.Commit(); c.want == 0 && err != nil {
				t.Fatal(err)
			}
			if got, want := stored(t, db, f, resource), max(c.then, c.first*boolInt(!c.rollback), c.seed); got != want {
				t.Fatalf("stored %d, want %d", got, want)
			}
		})
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// pinnedTx is a transaction on a connection whose backend pid we know.
type pinnedTx struct {
	tx  *sql.Tx
	pid int
}

func beginOn(t *testing.T, ctx context.Context, db *sql.DB) pinnedTx {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var pid int
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return pinnedTx{tx: tx, pid: pid}
}

// waitLockWait waits until backend pid waits for a lock.
func waitLockWait(t *testing.T, ctx context.Context, db *sql.DB, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting sql.NullString
		err := db.QueryRowContext(ctx, "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", pid).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting.String == "Lock" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d not waiting for a lock after 30s (wait event %q)", pid, waiting.String)
		}
		time.Sleep(5 * time.Millisecond) // polling the server for a condition
	}
}
