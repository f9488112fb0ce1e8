package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/zklock/zklock/fence"
)

// The resource's row is made by its first Admit, which is admitted; the
// rows of other resources are their own.
func TestAdmitCreatesRowOnFirstUse(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx := testCtx(t)
			if got := stored(t, db, f, "a"); got != 0 {
				t.Fatalf("a row for a before any Admit: %d", got)
			}
			admit(t, ctx, db, f, "a", 5)
			admit(t, ctx, db, f, "b", 3) // lower, on another resource
			if a, b := stored(t, db, f, "a"), stored(t, db, f, "b"); a != 5 || b != 3 {
				t.Fatalf("stored a=%d b=%d, want 5 and 3", a, b)
			}
			admit(t, ctx, db, f, "a", 5) // equal: the same hold writes again
			admit(t, ctx, db, f, "a", 9)
			if got := stored(t, db, f, "a"); got != 9 {
				t.Fatalf("stored %d after admitting 9", got)
			}
		})
	}
}

// admit admits token in a transaction of its own and commits it.
func admit(t *testing.T, ctx context.Context, db *sql.DB, f *fence.Fence, resource string, token int64) {
	t.Helper()
	if err := f.Do(ctx, db, resource, token, func(context.Context, *sql.Tx) error { return nil }); err != nil {
		t.Fatalf("admit %d on %s: %v", token, resource, err)
	}
}

// A stale token that comes after the fresh one committed is refused with
// both tokens, and what its transaction wrote, before the Admit and after,
// is rolled back with it.
func TestStaleTokenRefusedAndRolledBack(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, "CREATE TABLE report (id INTEGER PRIMARY KEY, token BIGINT NOT NULL)")
			ctx := testCtx(t)
			admit(t, ctx, db, f, "report", 7)

			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO report VALUES (1, 5)"); err != nil {
				t.Fatal(err)
			}
			err = f.Admit(ctx, tx, "report", 5)
			var stale *fence.StaleTokenError
			if !errors.As(err, &stale) || !errors.Is(err, fence.ErrStaleToken) {
				t.Fatalf("Admit(5) after 7: %v, want a *StaleTokenError", err)
			}
			if stale.Token != 5 || stale.Stored != 7 || stale.Resource != "report" {
				t.Fatalf("refusal %+v, want token 5, stored 7, resource report", *stale)
			}
			t.Log(err)
			// Admit rolled the refused transaction back already.
			if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
				t.Fatalf("Rollback after the refusal: %v, want sql.ErrTxDone", err)
			}
			ran := false
			err = f.Do(ctx, db, "report", 6, func(ctx context.Context, tx *sql.Tx) error {
				ran = true
				return nil
			})
			if !errors.Is(err, fence.ErrStaleToken) || ran {
				t.Fatalf("Do(6) after 7: %v, fn ran: %v; want ErrStaleToken and fn not run", err, ran)
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM report").Scan(&n); err != nil || n != 0 {
				t.Fatalf("report rows after the refusals: %d (%v), want 0", n, err)
			}
			if got := stored(t, db, f, "report"); got != 7 {
				t.Fatalf("stored %d after refusals of 5 and 6, want 7", got)
			}
		})
	}
}

// fn's error rolls back its writes and the raised token; a panic in fn
// rolls back too.
func TestDoRollsBackOnError(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx := testCtx(t)
			admit(t, ctx, db, f, "r", 4)
			boom := errors.New("boom")
			err := f.Do(ctx, db, "r", 8, func(ctx context.Context, tx *sql.Tx) error { return boom })
			if !errors.Is(err, boom) {
				t.Fatalf("Do: %v, want fn's error", err)
			}
			func() {
				defer func() { _ = recover() }()
				_ = f.Do(ctx, db, "r", 9, func(context.Context, *sql.Tx) error { panic("fn panics") })
			}()
			if got := stored(t, db, f, "r"); got != 4 {
				t.Fatalf("stored %d after fn failed with 8 and panicked with 9, want 4", got)
			}
			admit(t, ctx, db, f, "r", 5) // the pool is usable: no transaction was left open
		})
	}
}

// What no hold presents is refused before anything is sent; so are bad
// options.
func TestInvalidArguments(t *testing.T) {
	f, db := newFence(t, engines[1])
	ctx := testCtx(t)
	fn := func(context.Context, *sql.Tx) error { t.Error("fn ran"); return nil }
	for _, c := range []struct {
		resource string
		token    int64
		want     error
	}{{"r", 0, fence.ErrInvalidToken}, {"r", -3, fence.ErrInvalidToken}, {"", 5, fence.ErrInvalidResource}} {
		if err := f.Do(ctx, db, c.resource, c.token, fn); !errors.Is(err, c.want) {
			t.Errorf("Do(%q, %d): %v, want %v", c.resource, c.token, err, c.want)
		}
	}
	if got := stored(t, db, f, "r"); got != 0 {
		t.Errorf("a row was made: %d", got)
	}
	for _, c := range []struct {
		d    fence.Dialect
		opts []fence.Option
	}{
		{fence.Dialect(0), nil},
		{fence.Postgres, []fence.Option{fence.WithTable("fence; DROP TABLE x")}},
		{fence.SQLite, []fence.Option{fence.WithTable("1fence")}},
		{fence.SQLite, []fence.Option{fence.WithTable("")}},
	} {
		if _, err := fence.New(c.d, c.opts...); !errors.Is(err, fence.ErrInvalidOption) {
			t.Errorf("New(%v, %d options): %v, want ErrInvalidOption", c.d, len(c.opts), err)
		}
	}
	if f, err := fence.New(fence.Postgres, fence.WithTable("locks.fence_2")); err != nil || f.Table() != "locks.fence_2" {
		t.Errorf("a schema-qualified table: %v, %v", f, err)
	}
}
