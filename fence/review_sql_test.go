package fence_test

// Adversarial review (r46) of Fence on the real engines: each test attacks
// one claim of docs/fencing.md. TestReview_* held; TestReviewBreak_* is a
// finding and fails.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/fence/pgtest"
)

// Claim 4: "a context that ends before the commit rolls back, and the error
// says so and wraps ctx.Err()". Attack: the context ends while COMMIT is in
// flight. The server here has synchronous replication configured and no
// standby (synchronous_standby_names = 'nobody'), so COMMIT commits locally
// and then waits; the context is cancelled 200 ms after fn returns (pgx
// sends a CancelRequest, which ends the wait, the commit standing). Do says
// "rolled back, not committed", and the write and the raised token are
// committed: a caller that trusts the error and retries writes twice.
// (A server that is slow to answer a COMMIT it did, or a reply lost on the
// network, is the same case without replication.)
func TestReviewBreak_DoSaysRolledBackButCommitted(t *testing.T) {
	s := pgtest.Start(t)
	admin := openDB(t, "pgx", s.DSN())
	db := openDB(t, "pgx", s.DSN())
	f := fenceOn(t, fence.Postgres, db)
	for _, q := range []string{`CREATE TABLE w (x int)`, `ALTER SYSTEM SET synchronous_standby_names = 'nobody'`, `SELECT pg_reload_conf()`} {
		if _, err := admin.ExecContext(testCtx(t), q); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // the reload reaches the backends
	const runs = 3
	lies := 0
	for i := 1; i <= runs; i++ {
		ctx, cancel := context.WithCancel(testCtx(t))
		err := f.Do(ctx, db, "r", int64(i), func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO w VALUES ($1)", i)
			time.AfterFunc(200*time.Millisecond, cancel)
			return err
		})
		cancel()
		time.Sleep(500 * time.Millisecond) // the backend takes the CancelRequest
		var n int
		var tok int64
		qctx, qcancel := context.WithTimeout(testCtx(t), 10*time.Second)
		if err := admin.QueryRowContext(qctx, "SELECT (SELECT count(*) FROM w WHERE x = $1), coalesce((SELECT token FROM zklock_fence WHERE resource = 'r'), 0)", i).Scan(&n, &tok); err != nil {
			t.Fatal(err)
		}
		qcancel()
		t.Logf("run %d: Do: %v; rows of run %d committed: %d; fence token %d", i, err, i, n, tok)
		if err != nil && strings.Contains(err.Error(), "rolled back, not committed") && n == 1 && tok == int64(i) {
			lies++
		}
		// The fix (r46): a commit cut off by ctx is "outcome unknown".
		if n == 1 && err != nil && !(errors.Is(err, fence.ErrCommitUnknown) && errors.Is(err, context.Canceled)) {
			t.Errorf("run %d: committed, and Do returned %v, want ErrCommitUnknown wrapping context.Canceled", i, err)
		}
	}
	if lies > 0 {
		t.Errorf("%d of %d runs: Do said \"rolled back, not committed\" (wrapping ctx.Err()) and the write and its token were committed", lies, runs)
	}
}

// Claim 6: "CreateTable may run in many processes at once." Two processes
// name the same table two ways, as docs/fencing.md itself leads to: one
// unqualified (resolved by its search_path), one schema-qualified (the
// advice "Give the schema"). The advisory lock's key is hashtext of the
// name as written, so the two spellings do not take turns.
func TestReviewBreak_CreateTableConcurrentSpellings(t *testing.T) {
	db := openPostgres(t)
	ctx := testCtx(t)
	var schema string
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(40)
	const rounds, calls = 15, 30
	// rounds of 30 calls: in "one", every call spells the table one way (the
	// control, claim 6 as tested); in "two", half spell it qualified; in
	// "case", half in upper case.
	failed := map[string]int{}
	var msgs []string
	for round := range rounds {
		for _, mode := range []string{"one", "two", "case"} {
			table := fmt.Sprintf("fence_%s%d", mode, round)
			plain, err := fence.New(fence.Postgres, fence.WithTable(table))
			if err != nil {
				t.Fatal(err)
			}
			other := schema + "." + table
			if mode == "case" {
				other = strings.ToUpper(table) // PostgreSQL folds it: the same table
			}
			qualified, err := fence.New(fence.Postgres, fence.WithTable(other))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range calls {
				f := plain
				if mode != "one" && i%2 == 1 {
					f = qualified
				}
				wg.Go(func() {
					<-start
					if err := f.CreateTable(ctx, db); err != nil {
						mu.Lock()
						failed[mode]++
						if len(msgs) < 2 {
							msgs = append(msgs, err.Error())
						}
						mu.Unlock()
					}
				})
			}
			close(start)
			wg.Wait()
		}
	}
	t.Logf("CreateTable calls failed: one spelling %d of %d, plain and qualified %d of %d, lower and upper case %d of %d; first errors: %q", failed["one"], rounds*calls, failed["two"], rounds*calls, failed["case"], rounds*calls, msgs)
	if failed["two"] > 0 || failed["case"] > 0 {
		t.Errorf("concurrent CreateTable calls of one table failed: %d of %d spelled %q and %q, %d of %d spelled %q and %q (one spelling: %d of %d)", failed["two"], rounds*calls, "fence_twoN", schema+".fence_twoN", failed["case"], rounds*calls, "fence_caseN", "FENCE_CASEN", failed["one"], rounds*calls)
	}
}

// Claim 3 with savepoints (docs/fencing.md says nothing of them): a
// caller's unit of work in a savepoint (an ORM's nested transaction)
// admits token 5 and is rolled back to the savepoint; the transaction goes
// on and commits. On PostgreSQL rolling back to a savepoint releases the
// row lock taken after it, so token 7 is admitted and commits meanwhile,
// and token 5's write lands after it: "every write made after a higher
// token committed is refused" no longer holds.
func TestReviewBreak_SavepointRollbackUnfencesPostgres(t *testing.T) {
	f, db := newFence(t, engines[0], `CREATE TABLE doc (id int PRIMARY KEY, token bigint)`, `INSERT INTO doc VALUES (1, 0)`)
	ctx := testCtx(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	mustExec(t, ctx, tx, "SAVEPOINT unit")
	// The fix (r46): Admit refuses inside a savepoint, rolling tx back, so
	// the steps below fail with sql.ErrTxDone; on the old code Admit
	// succeeded and each step did too.
	admitErr := f.Admit(ctx, tx, "doc/1", 5)
	_, rbErr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT unit")
	t.Logf("Admit 5 in a savepoint: %v; ROLLBACK TO SAVEPOINT: %v", admitErr, rbErr)
	if admitErr != nil && (!errors.Is(admitErr, fence.ErrInSavepoint) || !errors.Is(rbErr, sql.ErrTxDone)) {
		t.Errorf("Admit in a savepoint: %v, then %v; want ErrInSavepoint and a rolled-back transaction", admitErr, rbErr)
	}
	// Token 7, in another transaction, is admitted and commits.
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = f.Do(dctx, db, "doc/1", 7, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE doc SET token = 7 WHERE id = 1")
		return err
	})
	cancel()
	if err != nil {
		t.Fatalf("token 7 beside the open transaction of token 5: %v", err)
	}
	_, werr := tx.ExecContext(ctx, "UPDATE doc SET token = 5 WHERE id = 1")
	commitErr := tx.Commit()
	t.Logf("token 5's write: %v", werr)
	var tok int64
	if err := db.QueryRowContext(ctx, "SELECT token FROM doc WHERE id = 1").Scan(&tok); err != nil {
		t.Fatal(err)
	}
	t.Logf("token 7 committed, then token 5's commit: %v; doc written by token %d; fence %d", commitErr, tok, stored(t, db, f, "doc/1"))
	if commitErr == nil && tok == 5 {
		t.Errorf("token 5 (admitted, then rolled back to a savepoint) committed its write after token 7 committed")
	}
	if tok != 7 || commitErr == nil || stored(t, db, f, "doc/1") != 7 {
		t.Errorf("doc written last by token %d (want 7), token 5's commit %v (want an error), fence %d (want 7)", tok, commitErr, stored(t, db, f, "doc/1"))
	}
}

// The same on SQLite holds: the transaction keeps the database's write
// lock, so token 7 waits until token 5's transaction ends.
func TestReview_SavepointRollbackSQLite(t *testing.T) {
	f, db := newFence(t, engines[1], `CREATE TABLE doc (id int PRIMARY KEY, token bigint)`, `INSERT INTO doc VALUES (1, 0)`)
	ctx := testCtx(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	mustExec(t, ctx, tx, "SAVEPOINT unit")
	if err := f.Admit(ctx, tx, "doc/1", 5); err != nil {
		t.Fatal(err)
	}
	mustExec(t, ctx, tx, "ROLLBACK TO SAVEPOINT unit")
	done := make(chan error, 1)
	go func() {
		done <- f.Do(ctx, db, "doc/1", 7, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE doc SET token = 7 WHERE id = 1")
			return err
		})
	}()
	select {
	case err := <-done:
		t.Fatalf("token 7 finished (%v) while token 5's transaction was open", err)
	case <-time.After(300 * time.Millisecond):
	}
	mustExec(t, ctx, tx, "UPDATE doc SET token = 5 WHERE id = 1")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var tok int64
	if err := db.QueryRowContext(ctx, "SELECT token FROM doc WHERE id = 1").Scan(&tok); err != nil {
		t.Fatal(err)
	}
	if tok != 7 {
		t.Errorf("doc written last by token %d, want 7", tok)
	}
}

// Claim 2: a refused Admit inside a savepoint: the caller rolls back to the
// savepoint to "recover" and commits. The whole transaction is gone.
func TestReview_RefusedAdmitInSavepointCannotCommit(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, `CREATE TABLE doc (id int PRIMARY KEY, token bigint)`)
			ctx := testCtx(t)
			admit(t, ctx, db, f, "d", 9)
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			mustExec(t, ctx, tx, "INSERT INTO doc VALUES (1, 3)")
			mustExec(t, ctx, tx, "SAVEPOINT s")
			if err := f.Admit(ctx, tx, "d", 3); !errors.Is(err, fence.ErrStaleToken) {
				t.Fatalf("Admit 3 after 9: %v", err)
			}
			_, e1 := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT s")
			_, e2 := tx.ExecContext(ctx, "INSERT INTO doc VALUES (2, 3)")
			e3 := tx.Commit()
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM doc").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(e1, sql.ErrTxDone) || !errors.Is(e2, sql.ErrTxDone) || !errors.Is(e3, sql.ErrTxDone) || n != 0 {
				t.Errorf("after a refusal: rollback to savepoint %v, insert %v, commit %v; %d rows", e1, e2, e3, n)
			}
		})
	}
}

// Claims 1 and 3 at the int64 edge, both engines: MaxInt64 admitted, again
// (equal), MaxInt64-1 refused with both tokens, 1 refused.
func TestReview_TokenEdges(t *testing.T) {
	const top = int64(^uint64(0) >> 1)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx := testCtx(t)
			for _, c := range []struct {
				token int64
				stale bool
			}{{top - 1, false}, {top, false}, {top, false}, {top - 1, true}, {1, true}} {
				err := f.Do(ctx, db, "edge", c.token, func(context.Context, *sql.Tx) error { return nil })
				var se *fence.StaleTokenError
				switch {
				case c.stale && !(errors.As(err, &se) && se.Token == c.token && se.Stored == top):
					t.Errorf("token %d after %d: %v, want a refusal naming both", c.token, top, err)
				case !c.stale && err != nil:
					t.Errorf("token %d: %v", c.token, err)
				}
			}
			if got := stored(t, db, f, "edge"); got != top {
				t.Errorf("stored %d, want %d", got, top)
			}
		})
	}
}

// Claim 4: a panic that is not an error (and runtime.Goexit-free) rolls
// back the write and the raised token; the pool's connection is usable.
func TestReview_DoPanicNonError(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, `CREATE TABLE doc (id int PRIMARY KEY)`)
			db.SetMaxOpenConns(1)
			ctx := testCtx(t)
			admit(t, ctx, db, f, "p", 2)
			func() {
				defer func() {
					if r := recover(); r != 42 {
						t.Errorf("recovered %v, want 42", r)
					}
				}()
				_ = f.Do(ctx, db, "p", 8, func(ctx context.Context, tx *sql.Tx) error {
					mustExec(t, ctx, tx, "INSERT INTO doc VALUES (1)")
					panic(42)
				})
			}()
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM doc").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if tok := stored(t, db, f, "p"); n != 0 || tok != 2 {
				t.Errorf("after a panic: %d rows, token %d; want 0, 2", n, tok)
			}
			if err := f.Do(ctx, db, "p", 3, func(context.Context, *sql.Tx) error { return nil }); err != nil {
				t.Errorf("token 3 after the panic: %v", err)
			}
		})
	}
}

// Claim 8: table names New accepts that the fence's own SQL uses as names
// of its own: "excluded" (the upsert's pseudo-table) and "f" (its alias),
// mixed case, and schema-qualified "main." on SQLite. Each must fence:
// admit 5, refuse 3, admit 7.
func TestReview_TableNamesThatCollideWithTheSQL(t *testing.T) {
	for _, e := range engines {
		names := []string{"excluded", "EXCLUDED", "f", "F", "Zk_Fence"}
		if e.dialect == fence.SQLite {
			names = append(names, "main.excluded", "temp_x")
		}
		for _, name := range names {
			t.Run(e.name+"/"+name, func(t *testing.T) {
				db := e.open(t)
				ctx := testCtx(t)
				f, err := fence.New(e.dialect, fence.WithTable(name))
				if err != nil {
					t.Fatal(err)
				}
				if err := f.CreateTable(ctx, db); err != nil {
					t.Fatal(err)
				}
				for _, tok := range []int64{5, 3, 7, 6} {
					err := f.Do(ctx, db, "r", tok, func(context.Context, *sql.Tx) error { return nil })
					if tok == 3 || tok == 6 {
						if !errors.Is(err, fence.ErrStaleToken) {
							t.Errorf("table %s: token %d: %v, want stale", name, tok, err)
						}
					} else if err != nil {
						t.Errorf("table %s: token %d: %v", name, tok, err)
					}
				}
			})
		}
	}
}

// Claim 8 at the limit, both engines: 1,024 bytes of 3-byte runes and an
// ASCII byte are stored as they are; 1,025 bytes (a 2-byte rune across the
// limit) are refused before anything is sent, the tx rolled back.
func TestReview_ResourceLimitMultibyte(t *testing.T) {
	at := strings.Repeat("€", 341) + "x" // 1,024 bytes
	over := strings.Repeat("a", 1023) + "é"
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx := testCtx(t)
			if err := f.Do(ctx, db, at, 4, func(context.Context, *sql.Tx) error { return nil }); err != nil {
				t.Fatalf("%d bytes: %v", len(at), err)
			}
			if got := stored(t, db, f, at); got != 4 {
				t.Errorf("%d bytes: stored %d", len(at), got)
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			err = f.Admit(ctx, tx, over, 4)
			if !errors.Is(err, fence.ErrInvalidResource) || len(err.Error()) > 200 {
				t.Errorf("%d bytes: %v", len(over), err)
			}
			if err := tx.Commit(); !errors.Is(err, sql.ErrTxDone) {
				t.Errorf("commit after a refused name: %v", err)
			}
		})
	}
}

// Claim 6 on SQLite (not claimed, tried anyway): 30 CreateTable at once on
// a fresh file, deferred transactions, busy_timeout, rollback journal.
func TestReview_CreateTableConcurrentSQLite(t *testing.T) {
	for round := range 3 {
		db := openDB(t, "sqlite", fmt.Sprintf("file:%s/r%d.db?_pragma=busy_timeout(10000)", t.TempDir(), round))
		f, err := fence.New(fence.SQLite)
		if err != nil {
			t.Fatal(err)
		}
		ctx := testCtx(t)
		var wg sync.WaitGroup
		errs := make(chan error, 30)
		start := make(chan struct{})
		for range 30 {
			wg.Go(func() {
				<-start
				if err := f.CreateTable(ctx, db); err != nil {
					errs <- err
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

func mustExec(t *testing.T, ctx context.Context, tx *sql.Tx, q string, args ...any) {
	t.Helper()
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// docs/fencing.md: "At REPEATABLE READ or SERIALIZABLE, a row changed since
// the transaction's snapshot fails the upsert with a serialization failure
// (SQLSTATE 40001)". Attack: the snapshot is taken before the resource's
// row exists (first use by token 7, committed after it); token 5 must not
// be admitted, and its transaction must not commit.
func TestReview_RepeatableReadFirstUse(t *testing.T) {
	for _, iso := range []sql.IsolationLevel{sql.LevelRepeatableRead, sql.LevelSerializable} {
		t.Run(iso.String(), func(t *testing.T) {
			f, db := newFence(t, engines[0], `CREATE TABLE doc (id int)`)
			ctx := testCtx(t)
			for _, c := range []struct {
				res   string
				first bool // the row is made after the snapshot (else raised after it)
			}{{"new", true}, {"old", false}} {
				if !c.first {
					admit(t, ctx, db, f, c.res, 1)
				}
				tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: iso})
				if err != nil {
					t.Fatal(err)
				}
				mustExec(t, ctx, tx, "SELECT 1 FROM doc")
				if err := f.Do(ctx, db, c.res, 7, func(context.Context, *sql.Tx) error { return nil }); err != nil {
					t.Fatal(err)
				}
				err = f.Admit(ctx, tx, c.res, 5)
				_, werr := tx.ExecContext(ctx, "INSERT INTO doc VALUES (5)")
				cerr := tx.Commit()
				t.Logf("%s: Admit 5 after 7 committed past the snapshot: %v; write %v; commit %v", c.res, err, werr, cerr)
				if err == nil || cerr == nil {
					t.Errorf("%s: token 5 admitted (%v) or committed (%v) after 7", c.res, err, cerr)
				}
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM doc").Scan(&n); err != nil || n != 0 {
				t.Errorf("rows %d (%v)", n, err)
			}
		})
	}
}
