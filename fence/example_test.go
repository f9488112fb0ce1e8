package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/zktest"
)

// Two holders of one lock write a row in turn; the first, holding on to its
// token after the second took over (as a holder frozen through its session's
// expiry would), is refused.
func ExampleFence_Do() {
	c, err := zktest.Launch(context.Background(), 1) // a throwaway ZooKeeper for this example
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	dir, _ := os.MkdirTemp("", "fence-example-")
	defer os.RemoveAll(dir)
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+"?_txlock=immediate&_pragma=busy_timeout(10000)")
	defer db.Close()
	f, _ := fence.New(fence.SQLite)
	if err := f.CreateTable(ctx, db); err != nil {
		fmt.Println(err)
		return
	}
	_, _ = db.ExecContext(ctx, "CREATE TABLE report (name TEXT PRIMARY KEY, state TEXT)")

	publish := func(token int64, state string) error {
		return f.Do(ctx, db, "nightly-report", token, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO report VALUES ('nightly', ?1) ON CONFLICT (name) DO UPDATE SET state = ?1", state)
			return err
		})
	}
	m, _ := zklock.NewMutex(s, "/locks/nightly-report")
	var tokens []int64
	for _, state := range []string{"draft", "published"} {
		if err := m.Lock(ctx); err != nil {
			fmt.Println(err)
			return
		}
		tokens = append(tokens, m.Token())
		fmt.Println(state, publish(m.Token(), state))
		_ = m.Unlock(ctx)
	}
	err = publish(tokens[0], "draft again")
	fmt.Println("the first holder again, stale:", errors.Is(err, fence.ErrStaleToken))
	var state string
	_ = db.QueryRowContext(ctx, "SELECT state FROM report").Scan(&state)
	fmt.Println(state)
	// Output:
	// draft <nil>
	// published <nil>
	// the first holder again, stale: true
	// published
}

// Admit inside a transaction of your own: on any error it has rolled the
// transaction back (a deferred Rollback is still harmless).
func ExampleFence_Admit() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "fence-example-")
	defer os.RemoveAll(dir)
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+"?_txlock=immediate")
	defer db.Close()
	f, _ := fence.New(fence.SQLite)
	_ = f.CreateTable(ctx, db)

	for _, token := range []int64{7, 7, 5} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := f.Admit(ctx, tx, "ledger", token); err != nil {
			fmt.Println(err)
			continue
		}
		// ... the transaction's writes to the ledger ...
		fmt.Println("admitted", token, tx.Commit())
	}
	// Output:
	// admitted 7 <nil>
	// admitted 7 <nil>
	// zklock: stale token 5 for resource "ledger": 7 was admitted
}

// holder stands for a zklock hold: anything with Token() int64.
type holder int64

func (h holder) Token() int64 { return int64(h) }

// An HTTP service fences its writes; clients send their hold's token.
func ExampleHandler() {
	put := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "stored", r.URL.Path)
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), put)) // 127.0.0.1
	defer srv.Close()

	for _, h := range []holder{8, 9, 8} {
		client := &http.Client{Transport: fence.Transport(h, srv.Client().Transport)}
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/objects/report", nil)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(h.Token(), resp.Status)
	}
	// Output:
	// 8 200 OK
	// 9 200 OK
	// 8 409 Conflict
}

// A Memory keeper outside HTTP: the fn of a stale token does not run.
func ExampleMemory_Do() {
	m := fence.NewMemory()
	for _, token := range []int64{3, 4, 2} {
		err := m.Do(context.Background(), "cache", token, func(context.Context) error {
			fmt.Println("rebuilding the cache with token", token)
			return nil
		})
		if err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println("highest:", m.Highest("cache"))
	// Output:
	// rebuilding the cache with token 3
	// rebuilding the cache with token 4
	// zklock: stale token 2 for resource "cache": 4 was admitted
	// highest: 4
}
