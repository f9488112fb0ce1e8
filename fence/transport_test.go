package fence_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/zklock/zklock/fence"
)

// A request whose body was computed under token 100 is redirected (307)
// after the hold was lost; a rival writes with 150; the process takes the
// lock again (200). The redirected request must not be stored under 200
// over the rival's write: it carries 100 (and is refused by the fence) or
// is not sent. A redirect while the hold is the same carries its token.
func TestTransportRedirectKeepsToken(t *testing.T) {
	var h holderVar
	mem := fence.NewMemory()
	var mu sync.Mutex
	var stored string // the object's body, "token: body"
	store := fence.Handler(mem, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		stored = r.Header.Get(fence.Header) + ": " + string(b)
		mu.Unlock()
	}), fence.WithResource(func(*http.Request) string { return "object" }))
	var srvURL string
	mux := http.NewServeMux()
	mux.Handle("PUT /new", store)
	mux.HandleFunc("PUT /old", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("lose") != "" {
			h.v.Store(0) // the hold is lost while the request is in flight
			rival, err := http.NewRequestWithContext(r.Context(), http.MethodPut, srvURL+"/new", strings.NewReader("rival's"))
			if err != nil {
				t.Error(err)
				return
			}
			rival.Header.Set(fence.Header, "150")
			resp, err := http.DefaultClient.Do(rival)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("the rival's write: %v %v", resp, err)
				return
			}
			resp.Body.Close()
			h.v.Store(200) // the process holds again, with a later token
		}
		http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	srvURL = srv.URL
	c := &http.Client{Transport: fence.Transport(&h, srv.Client().Transport)}
	put := func(path, body string) (int, error) {
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	h.v.Store(90)
	if status, err := put("/old", "computed under 90"); err != nil || status != http.StatusOK || stored != "90: computed under 90" {
		t.Fatalf("a redirect under the same hold: %d %v, stored %q", status, err, stored)
	}
	h.v.Store(100)
	status, err := put("/old?lose=1", "computed under 100")
	t.Logf("the redirected request: status %d, error %v; stored %q", status, err, stored)
	if stored != "150: rival's" {
		t.Errorf("stored %q after the rival's write with 150, want the rival's", stored)
	}
	if err == nil && status != http.StatusConflict {
		t.Errorf("the redirected request: %d, want refused (409 or not sent)", status)
	}
	if err != nil && !errors.Is(err, fence.ErrHoldChanged) {
		t.Errorf("the redirected request: %v, want ErrHoldChanged", err)
	}
}

// A request that carries its token already (the caller fixed it when it
// computed the body) is sent with that token while the holder holds it,
// and not sent once the holder holds another or none.
func TestTransportPinnedToken(t *testing.T) {
	srv, c, h, got := tokenRecorder(t)
	for _, hold := range []int64{100, 200, 0} {
		h.v.Store(hold)
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, srv.URL, strings.NewReader("computed under 100"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(fence.Header, "100")
		resp, err := c.Do(req)
		switch {
		case hold == 100 && err != nil:
			t.Fatal(err)
		case hold == 100:
			resp.Body.Close()
		case !errors.Is(err, fence.ErrHoldChanged):
			t.Errorf("pinned to 100 while holding %d: %v, want ErrHoldChanged", hold, err)
		}
	}
	if fmt.Sprint(*got) != "[100]" {
		t.Errorf("the server got %q, want one request with 100", *got)
	}
}

// The transport's own re-send of a request (on a kept-alive connection
// that the server closed after reading it; the body rewound through
// GetBody) carries the token it was first sent with, though the holder
// holds another by then.
func TestTransportRetryKeepsToken(t *testing.T) {
	var h holderVar
	var mu sync.Mutex
	var got []string
	attempts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get(fence.Header)+" "+string(b))
		attempts++
		first := r.URL.Path == "/x" && attempts == 2
		mu.Unlock()
		if first {
			h.v.Store(200) // the hold changes while the request is in flight
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close() // read, never answered: the client re-sends
		}
	}))
	defer srv.Close()
	c := &http.Client{Transport: fence.Transport(&h, srv.Client().Transport)}
	h.v.Store(100)
	for _, path := range []string{"/warm", "/x"} {
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, srv.URL+path, strings.NewReader("computed under 100"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", path) // makes a PUT replayable
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := "[/warm 100 computed under 100 /x 100 computed under 100 /x 100 computed under 100]"
	if fmt.Sprint(got) != want {
		t.Errorf("the server got %q, want the re-send with 100", got)
	}
}

// tokenRecorder returns a server that records the token of each request
// it gets (in got, read once the requests are done), and a client sending
// through a Transport of h.
func tokenRecorder(t *testing.T) (*httptest.Server, *http.Client, *holderVar, *[]string) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get(fence.Header))
	}))
	t.Cleanup(srv.Close)
	h := new(holderVar)
	return srv, &http.Client{Transport: fence.Transport(h, srv.Client().Transport)}, h, &got
}
