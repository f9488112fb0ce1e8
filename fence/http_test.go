package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zklock/zklock/fence"
)

// send sends method to url with the header set as given (nil: none).
func send(t *testing.T, c *http.Client, method, url string, header []string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, url, strings.NewReader("v"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range header {
		req.Header.Add(fence.Header, h)
	}
	resp, body := roundTrip(t, c, req)
	return resp.StatusCode, body
}

// roundTrip sends req and returns the response, its body read and closed.
func roundTrip(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// Each way a request can present its token, and what Handler answers.
func TestHandlerStatuses(t *testing.T) {
	var calls atomic.Int32
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		fmt.Fprint(w, "written")
	})
	mem := fence.NewMemory()
	srv := httptest.NewServer(fence.Handler(mem, next))
	defer srv.Close()
	for _, c := range []struct {
		name   string
		path   string
		header []string
		status int
		called bool
		body   string
	}{
		{"no token", "/a", nil, http.StatusPreconditionRequired, false, "send the Zklock-Token header"},
		{"not a number", "/a", []string{"x1"}, http.StatusBadRequest, false, "invalid fencing token"},
		{"zero", "/a", []string{"0"}, http.StatusBadRequest, false, "invalid fencing token"},
		{"negative", "/a", []string{"-7"}, http.StatusBadRequest, false, "invalid fencing token"},
		{"past int64", "/a", []string{"9223372036854775808"}, http.StatusBadRequest, false, "invalid fencing token"},
		{"two tokens", "/a", []string{"7", "8"}, http.StatusBadRequest, false, "2 Zklock-Token headers"},
		{"first", "/a", []string{"7"}, http.StatusOK, true, "written"},
		{"same again", "/a", []string{"7"}, http.StatusOK, true, "written"},
		{"stale", "/a", []string{"5"}, http.StatusConflict, false, `stale token 5 for resource "/a": 7 was admitted`},
		{"another resource", "/b", []string{"5"}, http.StatusOK, true, "written"},
		{"later", "/a", []string{"9"}, http.StatusOK, true, "written"},
		{"stale after later", "/a", []string{"8"}, http.StatusConflict, false, "9 was admitted"},
	} {
		before := calls.Load()
		status, body := send(t, srv.Client(), http.MethodPut, srv.URL+c.path, c.header)
		if status != c.status || !strings.Contains(body, c.body) || (calls.Load() > before) != c.called {
			t.Errorf("%s: %d %q, handler called: %v; want %d, %q, %v", c.name, status, body, calls.Load() > before, c.status, c.body, c.called)
		}
	}
	if mem.Highest("/a") != 9 || mem.Highest("/b") != 5 || mem.Highest("/c") != 0 {
		t.Errorf("highest /a %d, /b %d, /c %d; want 9, 5, 0", mem.Highest("/a"), mem.Highest("/b"), mem.Highest("/c"))
	}
}

// Many clients write one resource through a Memory fence with interleaved
// tokens; each admitted handler appends its token to the resource. The
// effects must land in token order: the fence serializes a resource's
// handlers, so none runs beside a later one.
func TestHandlerMemoryConcurrent(t *testing.T) {
	const clients, tokens = 16, 600
	var mu sync.Mutex
	var effects []int64
	var running atomic.Int32
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if running.Add(1) != 1 {
			t.Error("two handlers of one resource ran at once")
		}
		defer running.Add(-1)
		tok, _ := parseInt(r.Header.Get(fence.Header))
		mu.Lock()
		effects = append(effects, tok)
		mu.Unlock()
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), next, fence.WithResource(func(*http.Request) string { return "one" })))
	defer srv.Close()
	queue := make(chan int64, tokens)
	for tok := int64(1); tok <= tokens; tok++ {
		queue <- tok
	}
	close(queue)
	var ok, conflict atomic.Int32
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for tok := range queue {
				status, _ := send(t, srv.Client(), http.MethodPost, srv.URL+fmt.Sprintf("/x%d", tok), []string{fmt.Sprint(tok)})
				switch status {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusConflict:
					conflict.Add(1)
				default:
					t.Errorf("token %d: status %d", tok, status)
				}
			}
		})
	}
	wg.Wait()
	for i := 1; i < len(effects); i++ {
		if effects[i] < effects[i-1] {
			t.Errorf("effect of token %d landed after %d's", effects[i], effects[i-1])
		}
	}
	if int(ok.Load()) != len(effects) || ok.Load()+conflict.Load() != tokens || effects[len(effects)-1] != tokens {
		t.Errorf("%d ok, %d conflicts, %d effects, last %d", ok.Load(), conflict.Load(), len(effects), effects[len(effects)-1])
	}
	t.Logf("%d requests admitted in token order, %d refused with 409", ok.Load(), conflict.Load())
}

func parseInt(s string) (int64, error) {
	var n int64
	_, err := fmt.Sscan(s, &n)
	return n, err
}

// A Memory caller waiting behind a running fn gives up when its ctx ends.
func TestMemoryWaitHonoursContext(t *testing.T) {
	mem := fence.NewMemory()
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- mem.Do(context.Background(), "r", 5, func(context.Context) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan error, 1)
	go func() {
		waiting <- mem.Do(ctx, "r", 6, func(context.Context) error { t.Error("ran beside the first"); return nil })
	}()
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("Do after cancel: %v, want context.Canceled", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := mem.Do(context.Background(), "r", 4, func(context.Context) error { return nil }); !errors.Is(err, fence.ErrStaleToken) {
		t.Errorf("Do(4) after 5: %v", err)
	}
}

// With the database keeper, the handler writes through the fenced
// transaction (fence.Tx): a stale request is refused with 409 and writes
// nothing; a handler's error status rolls its write back, and its token;
// the response of a committed write comes after the commit.
func TestHandlerDatabaseKeeper(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, "CREATE TABLE object (name TEXT PRIMARY KEY, token BIGINT NOT NULL)")
			ctx := testCtx(t)
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tx := fence.Tx(r.Context())
				tok, _ := parseInt(r.Header.Get(fence.Header))
				_, err := tx.ExecContext(r.Context(), "INSERT INTO object VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET token = excluded.token", r.URL.Path, tok)
				if err != nil || r.URL.Query().Get("fail") != "" {
					http.Error(w, fmt.Sprint("refused by the handler ", err), http.StatusUnprocessableEntity)
					return
				}
				fmt.Fprint(w, "stored")
			})
			srv := httptest.NewServer(fence.Handler(f.Keeper(db), next))
			defer srv.Close()
			objectToken := func(name string) int64 {
				var tok int64
				if err := db.QueryRowContext(ctx, "SELECT token FROM object WHERE name = $1", name).Scan(&tok); err != nil && err != sql.ErrNoRows {
					t.Fatal(err)
				}
				return tok
			}
			for _, c := range []struct {
				path   string
				token  string
				status int
				object int64 // the object's token after the request
				fence  int64 // the fence's
			}{
				{"/o", "7", http.StatusOK, 7, 7},
				{"/o", "5", http.StatusConflict, 7, 7},
				{"/o?fail=1", "9", http.StatusUnprocessableEntity, 7, 7},
				{"/o", "8", http.StatusOK, 8, 8},
			} {
				status, body := send(t, srv.Client(), http.MethodPut, srv.URL+c.path, []string{c.token})
				if status != c.status || objectToken("/o") != c.object || stored(t, db, f, "/o") != c.fence {
					t.Errorf("PUT %s with %s: %d %q, object %d, fence %d; want %d, %d, %d", c.path, c.token, status, body,
						objectToken("/o"), stored(t, db, f, "/o"), c.status, c.object, c.fence)
				}
			}
		})
	}
}

// Transport sends the holder's token, read as each request goes, and sends
// nothing while the holder holds nothing; the caller's request is left as
// it was.
func TestTransport(t *testing.T) {
	srv, c, h, got := tokenRecorder(t)
	for _, tok := range []int64{0, 8589934592, 8589934593} {
		h.v.Store(tok)
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, srv.URL, strings.NewReader("v"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		switch {
		case tok == 0 && !errors.Is(err, fence.ErrInvalidToken):
			t.Errorf("token 0: %v, want ErrInvalidToken", err)
		case tok != 0 && err != nil:
			t.Fatal(err)
		case tok != 0:
			resp.Body.Close()
		}
		if req.Header.Get(fence.Header) != "" {
			t.Error("Transport changed the caller's request")
		}
	}
	if want := []string{"8589934592", "8589934593"}; fmt.Sprint(*got) != fmt.Sprint(want) {
		t.Errorf("the server got tokens %q, want %q", *got, want)
	}
}

type holderVar struct{ v atomic.Int64 }

func (h *holderVar) Token() int64 { return h.v.Load() }
