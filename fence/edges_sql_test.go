package fence_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zklock/zklock/fence"
)

// A caller that ignores Admit's refusal (or its error for a token no hold
// carries) can neither write through the transaction nor commit it: what
// it wrote before the Admit and tries to write after is not committed.
func TestRefusedAdmitPoisonsTx(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, "CREATE TABLE report (id INTEGER PRIMARY KEY, token BIGINT NOT NULL)")
			ctx := testCtx(t)
			admit(t, ctx, db, f, "report", 7)
			for i, token := range []int64{5, 0} {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.ExecContext(ctx, "INSERT INTO report VALUES ($1, $2)", 2*i, token); err != nil {
					t.Fatal(err)
				}
				if err := f.Admit(ctx, tx, "report", token); err == nil {
					t.Fatalf("Admit(%d) after 7 admitted", token)
				}
				_, execErr := tx.ExecContext(ctx, "INSERT INTO report VALUES ($1, $2)", 2*i+1, token)
				commitErr := tx.Commit()
				t.Logf("token %d: write after the refusal: %v; commit: %v", token, execErr, commitErr)
				if commitErr == nil {
					t.Errorf("token %d: the refused transaction committed", token)
				}
			}
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM report").Scan(&n); err != nil || n != 0 {
				t.Errorf("stale rows committed: %d (%v)", n, err)
			}
		})
	}
}

// Service instances starting together all create the fence table: every
// call succeeds.
func TestCreateTableConcurrent(t *testing.T) {
	const rounds, callers = 6, 30
	db := openPostgres(t)
	db.SetMaxOpenConns(callers)
	ctx := testCtx(t)
	failed := 0
	for round := range rounds {
		f, err := fence.New(fence.Postgres, fence.WithTable(fmt.Sprintf("fence_%d", round)))
		if err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		errs := make(chan error, callers)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				<-start
				errs <- f.CreateTable(ctx, db)
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				failed++
				t.Log(err)
			}
		}
		admit(t, ctx, db, f, "r", 1)
	}
	if failed > 0 {
		t.Errorf("%d of %d concurrent CreateTable calls failed", failed, rounds*callers)
	}
}

// A ctx cancelled inside fn rolls back, and Do says so with an error that
// wraps context.Canceled.
func TestDoCancelledInsideFn(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx, cancel := context.WithCancel(testCtx(t))
			err := f.Do(ctx, db, "r", 5, func(ctx context.Context, tx *sql.Tx) error {
				cancel()
				return nil
			})
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "rolled back") {
				t.Errorf("Do cancelled inside fn: %v, want context.Canceled and \"rolled back\"", err)
			}
			if got := stored(t, db, f, "r"); got != 0 {
				t.Errorf("stored %d after a cancelled Do", got)
			}
		})
	}
}

// Nil arguments and a zero Fence are errors naming what is wrong, never
// panics.
func TestNilArguments(t *testing.T) {
	f, db := newFence(t, engines[1])
	ctx := testCtx(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var nilFence *fence.Fence
	zero := &fence.Fence{}
	fn := func(context.Context, *sql.Tx) error { return nil }
	kfn := func(context.Context) error { return nil }
	for _, c := range []struct {
		name string
		call func() error
		want error
	}{
		{"Admit nil tx", func() error { return f.Admit(ctx, nil, "r", 5) }, fence.ErrNilArgument},
		{"Do nil db", func() error { return f.Do(ctx, nil, "r", 5, fn) }, fence.ErrNilArgument},
		{"Do nil fn", func() error { return f.Do(ctx, db, "r", 5, nil) }, fence.ErrNilArgument},
		{"CreateTable nil db", func() error { return f.CreateTable(ctx, nil) }, fence.ErrNilArgument},
		{"nil Fence Admit", func() error { return nilFence.Admit(ctx, tx, "r", 5) }, fence.ErrNilArgument},
		{"nil Fence Do", func() error { return nilFence.Do(ctx, db, "r", 5, fn) }, fence.ErrNilArgument},
		{"nil Fence CreateTable", func() error { return nilFence.CreateTable(ctx, db) }, fence.ErrNilArgument},
		{"nil Fence Keeper", func() error { return nilFence.Keeper(db).Do(ctx, "r", 5, kfn) }, fence.ErrNilArgument},
		{"Keeper(nil)", func() error { return f.Keeper(nil).Do(ctx, "r", 5, kfn) }, fence.ErrNilArgument},
		{"Keeper nil fn", func() error { return f.Keeper(db).Do(ctx, "r", 5, nil) }, fence.ErrNilArgument},
		{"zero Fence Admit", func() error { return zero.Admit(ctx, tx, "r", 5) }, fence.ErrZeroFence},
		{"zero Fence Do", func() error { return zero.Do(ctx, db, "r", 5, fn) }, fence.ErrZeroFence},
		{"zero Fence CreateTable", func() error { return zero.CreateTable(ctx, db) }, fence.ErrZeroFence},
		{"zero Fence Keeper", func() error { return zero.Keeper(db).Do(ctx, "r", 5, kfn) }, fence.ErrZeroFence},
		{"AdmitAll nil tx", func() error { return f.AdmitAll(ctx, nil, map[string]int64{"r": 5}) }, fence.ErrNilArgument},
		{"AdmitAll none", func() error { return f.AdmitAll(ctx, tx, nil) }, fence.ErrInvalidResource},
	} {
		err := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panicked: %v", p)
				}
			}()
			return c.call()
		}()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if got := stored(t, db, f, "r"); got != 0 {
		t.Errorf("a row was made: %d", got)
	}
}

// Table names that are SQL keywords are refused by New, as is either part
// of a qualified name; names close to them are not.
func TestNewRefusesReservedWords(t *testing.T) {
	for _, name := range []string{"select", "order", "ORDER", "user", "table", "locks.select", "where.fence", "Group"} {
		if _, err := fence.New(fence.Postgres, fence.WithTable(name)); !errors.Is(err, fence.ErrInvalidOption) {
			t.Errorf("New(Postgres, WithTable(%q)): %v, want ErrInvalidOption", name, err)
		}
		if _, err := fence.New(fence.SQLite, fence.WithTable(name)); !errors.Is(err, fence.ErrInvalidOption) {
			t.Errorf("New(SQLite, WithTable(%q)): %v, want ErrInvalidOption", name, err)
		}
	}
	for _, name := range []string{"selects", "order_fence", "users", "locks.tables"} {
		if _, err := fence.New(fence.Postgres, fence.WithTable(name)); err != nil {
			t.Errorf("New(WithTable(%q)): %v", name, err)
		}
	}
}

// randomName returns n bytes of random hex: a name PostgreSQL cannot
// compress below its index row limit.
func randomName(t *testing.T, n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", b)[:n]
}

// A resource name over MaxResource bytes (or with a NUL or invalid UTF-8,
// which PostgreSQL's text cannot hold) is refused before anything is sent,
// with an error that does not carry the whole name; one of MaxResource
// random bytes is admitted by both engines; Handler answers 400 for one
// named by the request's path.
func TestResourceNameLimit(t *testing.T) {
	long := randomName(t, 3000)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e)
			ctx := testCtx(t)
			for _, bad := range []string{long, randomName(t, fence.MaxResource+1), "a\x00b", "a\xffb"} {
				err := f.Do(ctx, db, bad, 5, func(context.Context, *sql.Tx) error { t.Error("fn ran"); return nil })
				if !errors.Is(err, fence.ErrInvalidResource) || len(err.Error()) > 200 {
					t.Errorf("a resource of %d bytes: %d-byte error %.300q, want ErrInvalidResource in under 200", len(bad), len(err.Error()), err)
				}
			}
			admit(t, ctx, db, f, randomName(t, fence.MaxResource), 5)

			srv := httptest.NewServer(fence.Handler(f.Keeper(db), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
			defer srv.Close()
			status, body := send(t, srv.Client(), http.MethodPut, srv.URL+"/"+long, []string{"5"})
			if status != http.StatusBadRequest || len(body) > 200 {
				t.Errorf("PUT of a %d-byte path: %d, %d-byte body %.300q; want 400 in under 200", len(long)+1, status, len(body), body)
			}
			for _, path := range []string{"/a%00b", "/a%FFb"} {
				if status, body := send(t, srv.Client(), http.MethodPut, srv.URL+path, []string{"5"}); status != http.StatusBadRequest {
					t.Errorf("PUT %s: %d %q, want 400", path, status, body)
				}
			}
		})
	}
}
