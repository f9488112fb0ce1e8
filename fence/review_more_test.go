package fence_test

// Adversarial review (r46), continued: failed commits, Memory under
// cancellation, one Transport shared while the hold changes.

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock/fence"
)

// Claim 4 ("Do commits only what succeeded") and claim 14 on SQLite: fn's
// write breaks a deferred foreign key, so COMMIT fails. SQLite leaves the
// transaction open after such a failed COMMIT. Nothing of it may commit
// later, and the next fenced write must not fail for the lock.
func TestReview_SQLiteFailedCommitLeavesNothing(t *testing.T) {
	db := openDB(t, "sqlite", "file:"+t.TempDir()+"/fk.db?_pragma=foreign_keys(1)&_pragma=busy_timeout(2000)&_pragma=journal_mode(WAL)")
	f := fenceOn(t, fence.SQLite, db)
	db.SetMaxOpenConns(1) // the later writes use the connection of the failed COMMIT
	ctx := testCtx(t)
	for _, q := range []string{
		`CREATE TABLE parent (id INTEGER PRIMARY KEY)`,
		`CREATE TABLE child (id INTEGER PRIMARY KEY, p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	err := f.Do(ctx, db, "r", 5, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO child VALUES (1, 99)")
		return err
	})
	t.Logf("Do with a deferred FK violation: %v", err)
	if err == nil {
		t.Fatal("Do committed a foreign key violation")
	}
	// The next fenced writes, on whatever connections the pool gives.
	var errs []string
	for tok := int64(6); tok <= 9; tok++ {
		err := f.Do(ctx, db, "r", tok, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO parent VALUES (?1)", tok)
			return err
		})
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	var children int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM child").Scan(&children); err != nil {
		t.Fatal(err)
	}
	t.Logf("later writes failed: %q; children %d; fence %d", errs, children, stored(t, db, f, "r"))
	if len(errs) > 0 || children != 0 || stored(t, db, f, "r") != 9 {
		t.Errorf("after a failed COMMIT: %d later fenced writes failed (%q), %d rows of the failed one, fence %d", len(errs), errs, children, stored(t, db, f, "r"))
	}
}

// The same on PostgreSQL, through Handler and the database keeper: the
// handler answers 200, the COMMIT fails on the deferred constraint; the
// client must not get 200 and nothing may commit.
func TestReview_HandlerCommitFailsNot200(t *testing.T) {
	f, db := newFence(t, engines[0],
		`CREATE TABLE parent (id int PRIMARY KEY)`,
		`CREATE TABLE child (id int PRIMARY KEY, p int REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)`)
	srv := httptest.NewServer(fence.Handler(f.Keeper(db), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := fence.Tx(r.Context()).ExecContext(r.Context(), "INSERT INTO child VALUES (1, 99)"); err != nil {
			t.Error(err)
		}
		w.Write([]byte("stored"))
	})))
	defer srv.Close()
	resp, body := putWithToken(t, srv.Client(), srv.URL+"/c", "5")
	var n int
	if err := db.QueryRowContext(testCtx(t), "SELECT count(*) FROM child").Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d %s=%q %q; rows %d, fence %d", resp.StatusCode, fence.RefusedHeader, resp.Header.Get(fence.RefusedHeader), strings.TrimSpace(body), n, stored(t, db, f, "/c"))
	if resp.StatusCode < 500 || n != 0 || stored(t, db, f, "/c") != 0 || strings.Contains(body, "stored") {
		t.Errorf("a commit that failed: %d %q, %d rows, fence %d", resp.StatusCode, body, n, stored(t, db, f, "/c"))
	}
}

// Claim 4 through Handler: a handler that wrote its 200 and a body, then
// panics with http.ErrAbortHandler: nothing commits, no 200 reaches the
// client (both engines).
func TestReview_HandlerAbortAfter200(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, `CREATE TABLE doc (id int PRIMARY KEY)`)
			srv := httptest.NewUnstartedServer(fence.Handler(f.Keeper(db), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := fence.Tx(r.Context()).ExecContext(r.Context(), "INSERT INTO doc VALUES (1)"); err != nil {
					t.Error(err)
				}
				w.WriteHeader(http.StatusOK)
				w.Write([]byte("stored"))
				panic(http.ErrAbortHandler)
			})))
			srv.Config.ErrorLog = nil
			srv.Start()
			defer srv.Close()
			req := mustReq(t, http.MethodPut, srv.URL+"/d")
			req.Header.Set(fence.Header, "4")
			resp, err := srv.Client().Do(req)
			status := 0
			if err == nil {
				status = resp.StatusCode
				resp.Body.Close()
			}
			var n int
			if err := db.QueryRowContext(testCtx(t), "SELECT count(*) FROM doc").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if status == http.StatusOK || n != 0 || stored(t, db, f, "/d") != 0 {
				t.Errorf("handler aborted after 200: client got %d (%v), rows %d, fence %d", status, err, n, stored(t, db, f, "/d"))
			}
		})
	}
}

// Claim 10 with cancellations: 16 goroutines, 400 tokens, through one
// Memory (tokens handed out in order, so callers race by a few); a third of the callers give up at a random moment. The fns of
// the resource never overlap, and the tokens they run under never go
// down.
func TestReview_MemoryConcurrentCancellations(t *testing.T) {
	m := fence.NewMemory()
	var mu sync.Mutex
	var order []int64
	var inside, overlaps atomic.Int32
	tokens := make(chan int64, 400)
	for tok := range int64(400) { // ascending, taken by 16 at once: interleaved
		tokens <- tok + 1
	}
	close(tokens)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for tok := range tokens {
				ctx, cancel := context.WithCancel(context.Background())
				if tok%3 == 0 {
					time.AfterFunc(time.Duration(rand.IntN(200))*time.Microsecond, cancel)
				}
				err := m.Do(ctx, "r", tok, func(ctx context.Context) error {
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					mu.Lock()
					order = append(order, tok)
					mu.Unlock()
					time.Sleep(20 * time.Microsecond)
					inside.Add(-1)
					return nil
				})
				cancel()
				if err != nil && !errors.Is(err, fence.ErrStaleToken) && !errors.Is(err, context.Canceled) {
					t.Errorf("token %d: %v", tok, err)
				}
			}
		})
	}
	wg.Wait()
	down := 0
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			down++
		}
	}
	t.Logf("%d fns ran; highest %d", len(order), m.Highest("r"))
	if down > 0 || overlaps.Load() > 0 || m.Highest("r") != order[len(order)-1] {
		t.Errorf("%d times a lower token ran after a higher one, %d overlaps, highest %d, last %d", down, overlaps.Load(), m.Highest("r"), order[len(order)-1])
	}
}

// Claim 12 with one Transport shared by 8 goroutines while the hold flips
// between nothing, 100 and 200: no request goes out while nothing is held,
// and each carries 100 or 200; a refused one wraps ErrInvalidToken.
func TestReview_TransportSharedWhileHoldChanges(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.Header.Get(fence.Header)]++
		mu.Unlock()
	}))
	defer srv.Close()
	h := new(holderVar)
	c := &http.Client{Transport: fence.Transport(h, srv.Client().Transport)}
	stop := make(chan struct{})
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			h.v.Store([]int64{0, 100, 200}[i%3])
			time.Sleep(50 * time.Microsecond)
		}
	}()
	var refused atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				resp, err := c.Do(mustReq(t, http.MethodPut, srv.URL+"/x"))
				if err != nil {
					if !errors.Is(err, fence.ErrInvalidToken) {
						t.Errorf("refused with %v", err)
					}
					refused.Add(1)
					continue
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(stop)
	<-flipped
	t.Logf("server got %v; %d refused by the transport", got, refused.Load())
	for tok := range got {
		if tok != "100" && tok != "200" {
			t.Errorf("a request went out with token %q", tok)
		}
	}
}

// Claims 10 and 11 together, with the database keeper under concurrency
// (the claims list tests Handler's concurrency through Memory only): 8
// clients, 200 interleaved tokens, the handler a read-modify-write through
// Tx. Every 200 is a committed write, every other answer wrote nothing,
// the committed tokens never go down, no increment is lost.
func TestReview_HandlerDatabaseKeeperConcurrent(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e,
				`CREATE TABLE ctr (id int PRIMARY KEY, n int NOT NULL)`,
				`INSERT INTO ctr VALUES (1, 0)`,
				`CREATE TABLE wlog (seq int PRIMARY KEY, token bigint NOT NULL)`)
			srv := httptest.NewServer(fence.Handler(f.Keeper(db), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx, tx := r.Context(), fence.Tx(r.Context())
				var n int
				if err := tx.QueryRowContext(ctx, "SELECT n FROM ctr WHERE id = 1").Scan(&n); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				tok := r.Header.Get(fence.Header)
				if _, err := tx.ExecContext(ctx, "UPDATE ctr SET n = $1 WHERE id = 1", n+1); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				if _, err := tx.ExecContext(ctx, "INSERT INTO wlog VALUES ($1, $2)", n+1, tok); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}), fence.WithResource(func(*http.Request) string { return "ctr" })))
			defer srv.Close()
			tokens := make(chan int64, 200)
			for tok := range int64(200) {
				tokens <- tok + 1
			}
			close(tokens)
			var mu sync.Mutex
			oks := map[int64]bool{}
			other := map[int]int{}
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for tok := range tokens {
						resp, _ := putWithToken(t, srv.Client(), srv.URL+"/ctr", strconv.FormatInt(tok, 10))
						mu.Lock()
						if resp.StatusCode == http.StatusOK {
							oks[tok] = true
						} else {
							other[resp.StatusCode]++
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			rows, err := db.QueryContext(testCtx(t), "SELECT seq, token FROM wlog ORDER BY seq")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var last int64
			down, extra, logged := 0, 0, 0
			for rows.Next() {
				var seq int
				var tok int64
				if err := rows.Scan(&seq, &tok); err != nil {
					t.Fatal(err)
				}
				logged++
				if tok < last {
					down++
				}
				last = tok
				if !oks[tok] {
					extra++
				}
			}
			var n int
			if err := db.QueryRowContext(testCtx(t), "SELECT n FROM ctr").Scan(&n); err != nil {
				t.Fatal(err)
			}
			t.Logf("200: %d, others %v; logged %d, counter %d, fence %d", len(oks), other, logged, n, stored(t, db, f, "ctr"))
			if down > 0 || extra > 0 || logged != len(oks) || n != len(oks) || other[http.StatusConflict] != 200-len(oks) {
				t.Errorf("%d committed writes went down in token, %d committed without a 200, logged %d, counter %d, 200s %d, others %v", down, extra, logged, n, len(oks), other)
			}
		})
	}
}
