package fence_test

// Tests of the fixes for the r46 review's findings, beside the review's
// own tests (review_*_test.go), which hold them too.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/fence"
)

// Claim 9: a marker the wrapped handler declares as a trailer in the
// Trailer header (any case), with its value set after the body, is not
// sent; the handler's other trailers are.
func TestHandlerStripsDeclaredRefusedTrailer(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "zklock-refused, X-Sum")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, strings.Repeat("x", 64<<10))
		w.Header()["zklock-refused"] = []string{"stale"}
		w.Header().Set("Zklock-Refused", "stale")
		w.Header().Set("X-Sum", "42")
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), next))
	defer srv.Close()
	resp, _ := putWithToken(t, srv.Client(), srv.URL+"/a", "7")
	t.Logf("%d; header %v; trailer %v", resp.StatusCode, resp.Header, resp.Trailer)
	if resp.StatusCode != http.StatusConflict || resp.Header.Get(fence.RefusedHeader) != "" || resp.Trailer.Get(fence.RefusedHeader) != "" {
		t.Errorf("the wrapped handler's declared trailer: %d, header %q, trailer %q", resp.StatusCode, resp.Header.Get(fence.RefusedHeader), resp.Trailer.Get(fence.RefusedHeader))
	}
	if resp.Trailer.Get("X-Sum") != "42" {
		t.Errorf("the handler's own trailer X-Sum: %q, want 42", resp.Trailer.Get("X-Sum"))
	}
}

// Claim 9 with nested Handlers: the inner fence's refusal keeps its mark
// through the outer one even when a middleware wraps the ResponseWriter
// between them (found through Unwrap, as http.ResponseController does),
// and an error status the handler wrote before the inner refusal stays
// unmarked (it is the handler's answer, and it stays the status).
func TestNestedHandlerMarkThroughWrapper(t *testing.T) {
	innerMem := fence.NewMemory()
	inner := fence.Handler(innerMem, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		fence.WithResource(func(*http.Request) string { return "b" }))
	var before bool
	mid := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before {
			http.Error(w, "the service's own 409", http.StatusConflict)
		}
		inner.ServeHTTP(&wrapped{w}, r)
	})
	outer := fence.Handler(fence.NewMemory(), mid, fence.WithResource(func(*http.Request) string { return "a" }))
	srv := httptest.NewServer(outer)
	defer srv.Close()
	if err := innerMem.Do(testCtx(t), "b", 20, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	resp, body := putWithToken(t, srv.Client(), srv.URL+"/x", "10")
	if resp.StatusCode != http.StatusConflict || resp.Header.Get(fence.RefusedHeader) != "stale" {
		t.Errorf("inner refusal through a wrapper: %d %q %q, want 409 stale", resp.StatusCode, resp.Header.Get(fence.RefusedHeader), body)
	}
	before = true
	resp, body = putWithToken(t, srv.Client(), srv.URL+"/x", "11")
	if resp.StatusCode != http.StatusConflict || resp.Header.Get(fence.RefusedHeader) != "" {
		t.Errorf("the service's 409, then an inner refusal: %d %q %q, want 409 unmarked", resp.StatusCode, resp.Header.Get(fence.RefusedHeader), body)
	}
}

// Three Handlers deep: the innermost refusal's mark reaches the client
// through two outer ones; an admitted request through all three is
// unmarked.
func TestNestedHandlersThreeDeep(t *testing.T) {
	mems := []*fence.Memory{fence.NewMemory(), fence.NewMemory(), fence.NewMemory()}
	var calls int
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ })
	for i, m := range mems {
		name := fmt.Sprint("r", i)
		h = fence.Handler(m, h, fence.WithResource(func(*http.Request) string { return name }))
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if resp, _ := putWithToken(t, srv.Client(), srv.URL+"/x", "5"); resp.StatusCode != http.StatusOK || resp.Header.Get(fence.RefusedHeader) != "" {
		t.Fatalf("token 5 through three fences: %d %q", resp.StatusCode, resp.Header.Get(fence.RefusedHeader))
	}
	if err := mems[0].Do(testCtx(t), "r0", 9, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	resp, body := putWithToken(t, srv.Client(), srv.URL+"/x", "6")
	if resp.StatusCode != http.StatusConflict || resp.Header.Get(fence.RefusedHeader) != "stale" || calls != 1 {
		t.Errorf("token 6, stale for the innermost fence: %d %q %q, handler calls %d (want 409 stale, 1)", resp.StatusCode, resp.Header.Get(fence.RefusedHeader), body, calls)
	}
}

// A middleware between two Handlers that turns the inner refusal into a
// 200 of its own: the outer Handler's 200 is not marked (the mark follows
// the refusal's status, not the response).
func TestNestedHandlerMarkFollowsStatus(t *testing.T) {
	innerMem := fence.NewMemory()
	inner := fence.Handler(innerMem, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		fence.WithResource(func(*http.Request) string { return "b" }))
	mid := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(&okWriter{wrapped{w}}, r)
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), mid, fence.WithResource(func(*http.Request) string { return "a" })))
	defer srv.Close()
	if err := innerMem.Do(testCtx(t), "b", 20, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	resp, body := putWithToken(t, srv.Client(), srv.URL+"/x", "10")
	if resp.StatusCode != http.StatusOK || resp.Header.Get(fence.RefusedHeader) != "" {
		t.Errorf("the middleware's 200 over an inner refusal: %d %q %q, want 200 unmarked", resp.StatusCode, resp.Header.Get(fence.RefusedHeader), body)
	}
}

// okWriter answers 200 whatever status is written through it.
type okWriter struct{ wrapped }

func (w *okWriter) WriteHeader(int) { w.ResponseWriter.WriteHeader(http.StatusOK) }

type wrapped struct{ http.ResponseWriter }

func (w *wrapped) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Claim 4: ctx ending before COMMIT is sent is still "rolled back" (not
// ErrCommitUnknown): proven, nothing committed (both engines).
func TestDoCancelledBeforeCommitIsRolledBack(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, `CREATE TABLE w (x int)`)
			ctx, cancel := context.WithCancel(testCtx(t))
			err := f.Do(ctx, db, "r", 3, func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO w VALUES (1)")
				cancel()
				return err
			})
			var n int
			if qerr := db.QueryRowContext(testCtx(t), "SELECT count(*) FROM w").Scan(&n); qerr != nil {
				t.Fatal(qerr)
			}
			if !errors.Is(err, context.Canceled) || errors.Is(err, fence.ErrCommitUnknown) || !strings.Contains(err.Error(), "rolled back, not committed") || n != 0 || stored(t, db, f, "r") != 0 {
				t.Errorf("cancelled before COMMIT: %v; rows %d, fence %d", err, n, stored(t, db, f, "r"))
			}
		})
	}
}

// Claim 3 with savepoints on PostgreSQL: a savepoint taken after Admit and
// rolled back keeps the row lock (token 7 waits on it until token 5's
// transaction ends), and Admit after RELEASE SAVEPOINT (back at the top
// level) is admitted; AdmitAll and Do refuse inside a savepoint too.
func TestSavepointAfterAdmitKeepsFence(t *testing.T) {
	f, db := newFence(t, engines[0], `CREATE TABLE doc (id int PRIMARY KEY, token bigint)`, `INSERT INTO doc VALUES (1, 0)`)
	ctx := testCtx(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	mustExec(t, ctx, tx, "SAVEPOINT a")
	mustExec(t, ctx, tx, "RELEASE SAVEPOINT a")
	if err := f.Admit(ctx, tx, "doc/1", 5); err != nil {
		t.Fatalf("Admit after RELEASE SAVEPOINT: %v", err)
	}
	mustExec(t, ctx, tx, "SAVEPOINT unit")
	mustExec(t, ctx, tx, "UPDATE doc SET token = 5 WHERE id = 1")
	mustExec(t, ctx, tx, "ROLLBACK TO SAVEPOINT unit")
	var pid int
	if err := tx.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- f.Do(ctx, db, "doc/1", 7, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE doc SET token = 7 WHERE id = 1")
			return err
		})
	}()
	// Token 7 is blocked by token 5's backend (the row lock): wait until
	// PostgreSQL says so, bounded.
	blocked := false
	for deadline := time.Now().Add(20 * time.Second); !blocked && time.Now().Before(deadline); {
		if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)))", pid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("token 7 finished (%v) while token 5's transaction held the fence", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if !blocked {
		t.Fatal("token 7 was never seen waiting on token 5's transaction")
	}
	mustExec(t, ctx, tx, "UPDATE doc SET token = 5 WHERE id = 1")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var tok int64
	if err := db.QueryRowContext(ctx, "SELECT token FROM doc WHERE id = 1").Scan(&tok); err != nil || tok != 7 {
		t.Errorf("doc written last by token %d (%v), want 7", tok, err)
	}
	// AdmitAll and Do inside a savepoint: refused, rolled back.
	tx2, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback()
	mustExec(t, ctx, tx2, "SAVEPOINT s")
	if err := f.AdmitAll(ctx, tx2, map[string]int64{"doc/1": 9, "doc/2": 9}); !errors.Is(err, fence.ErrInSavepoint) {
		t.Errorf("AdmitAll in a savepoint: %v, want ErrInSavepoint", err)
	}
	if err := tx2.Commit(); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("commit after AdmitAll was refused: %v", err)
	}
	err = f.Do(ctx, db, "doc/1", 9, func(ctx context.Context, tx *sql.Tx) error {
		mustExec(t, ctx, tx, "SAVEPOINT nested")
		return f.Admit(ctx, tx, "doc/3", 9)
	})
	if !errors.Is(err, fence.ErrInSavepoint) || stored(t, db, f, "doc/1") != 7 || stored(t, db, f, "doc/3") != 0 {
		t.Errorf("Admit in a savepoint inside Do: %v; fence doc/1 %d, doc/3 %d", err, stored(t, db, f, "doc/1"), stored(t, db, f, "doc/3"))
	}
}
