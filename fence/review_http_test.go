package fence_test

// Adversarial review (r46) of Handler and Transport: each test attacks one
// claim of docs/fencing.md. TestReview_* held; TestReviewBreak_* is a
// finding and fails.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock/fence"
)

// putWithToken sends a PUT of path with one token header through c.
func putWithToken(t *testing.T, c *http.Client, url, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, url, strings.NewReader("v"))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set(fence.Header, token)
	}
	return roundTrip(t, c, req)
}

// Claim 9: "Its own answers carry Zklock-Refused, the wrapped handler's
// never". The wrapped handler sets the header under a key that is not in
// canonical form (the map is a plain map; net/http writes keys as given and
// the client canonicalizes them): Handler deletes only the canonical key.
func TestReviewBreak_HandlerForgedRefusedHeaderNonCanonicalKey(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["zklock-refused"] = []string{"stale"}
		http.Error(w, "the handler's own conflict", http.StatusConflict)
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), next))
	defer srv.Close()
	resp, _ := putWithToken(t, srv.Client(), srv.URL+"/a", "7")
	if got := resp.Header.Get(fence.RefusedHeader); got != "" {
		t.Errorf("the wrapped handler's %d reached the client with %s: %q (a client takes it for the fence's stale refusal)", resp.StatusCode, fence.RefusedHeader, got)
	}
}

// The same through an informational response: "Informational responses
// ... are sent to the client at once, with the handler's header as it is
// then"; the 103 must not carry the marker either.
func TestReviewBreak_HandlerForgedRefusedHeaderIn1xx(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["zklock-refused"] = []string{"stale"}
		w.WriteHeader(http.StatusEarlyHints)
		delete(w.Header(), "zklock-refused")
		fmt.Fprint(w, "ok")
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), next))
	defer srv.Close()
	var marks []string
	ctx := withGot1xx(testCtx(t), func(code int, h textproto.MIMEHeader) {
		marks = append(marks, fmt.Sprintf("%d %s=%q", code, fence.RefusedHeader, textproto.MIMEHeader(h).Get(fence.RefusedHeader)))
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/a", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(fence.Header, "7")
	resp, _ := roundTrip(t, srv.Client(), req)
	t.Logf("final %d; informational: %q", resp.StatusCode, marks)
	for _, m := range marks {
		if !strings.HasSuffix(m, `=""`) {
			t.Errorf("an informational response of the wrapped handler carried the marker: %s", m)
		}
	}
}

// Claim 9 again, through a trailer: the handler declares Zklock-Refused as a
// trailer with http.TrailerPrefix and writes a body larger than net/http's
// buffer (so the response is chunked and trailers are sent).
func TestReviewBreak_HandlerForgedRefusedTrailer(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, strings.Repeat("x", 64<<10))
		w.Header().Set(http.TrailerPrefix+fence.RefusedHeader, "stale")
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), next))
	defer srv.Close()
	resp, _ := putWithToken(t, srv.Client(), srv.URL+"/a", "7")
	if got := resp.Trailer.Get(fence.RefusedHeader); got != "" || resp.Header.Get(fence.RefusedHeader) != "" {
		t.Errorf("the wrapped handler's %d carried %s: header %q, trailer %q", resp.StatusCode, fence.RefusedHeader, resp.Header.Get(fence.RefusedHeader), got)
	}
}

// Two features at once: two resources fenced per request by nesting two
// Handlers (Handler takes one resource). The inner fence's stale refusal is
// its own answer and should carry "Zklock-Refused: stale" (claim 9); the
// outer Handler treats it as its wrapped handler's answer and removes it.
func TestReviewBreak_NestedHandlersLoseStaleMark(t *testing.T) {
	var calls atomic.Int32
	inner := fence.Handler(fence.NewMemory(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		fmt.Fprint(w, "written")
	}), fence.WithResource(func(r *http.Request) string { return "b" }))
	outer := fence.Handler(fence.NewMemory(), inner, fence.WithResource(func(r *http.Request) string { return "a" }))
	srv := httptest.NewServer(outer)
	defer srv.Close()
	if resp, _ := putWithToken(t, srv.Client(), srv.URL+"/x", "9"); resp.StatusCode != http.StatusOK {
		t.Fatalf("token 9: %d", resp.StatusCode)
	}
	// Raise "b" alone to 20 (through another outer, on resource "c"), so
	// that a token between passes the outer fence and is stale for the inner.
	innerOnly := fence.Handler(fence.NewMemory(), inner, fence.WithResource(func(r *http.Request) string { return "c" }))
	srv2 := httptest.NewServer(innerOnly)
	defer srv2.Close()
	if resp, _ := putWithToken(t, srv2.Client(), srv2.URL+"/x", "20"); resp.StatusCode != http.StatusOK {
		t.Fatalf("token 20 through the second outer: %d", resp.StatusCode)
	}
	// "a" is at 9, "b" at 20: token 10 passes the outer, is stale for the inner.
	resp, body := putWithToken(t, srv.Client(), srv.URL+"/x", "10")
	t.Logf("token 10: %d, %s=%q, body %q, handler calls %d", resp.StatusCode, fence.RefusedHeader, resp.Header.Get(fence.RefusedHeader), strings.TrimSpace(body), calls.Load())
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("token 10: %d, want 409", resp.StatusCode)
	}
	if calls.Load() != 2 {
		t.Errorf("the handler ran %d times, want 2", calls.Load())
	}
	if got := resp.Header.Get(fence.RefusedHeader); got != "stale" {
		t.Errorf("a stale token's 409 (body %q) reached the client with %s %q, want \"stale\": the client cannot tell it from the service's own 409", strings.TrimSpace(body), fence.RefusedHeader, got)
	}
}

// Claim 11 / "next cannot stream": the wrapped handler cannot flush, hijack
// or switch protocols through the fenced ResponseWriter, so nothing reaches
// the client before the keeper is done; a 101 after a body is answered 500.
func TestReview_HandlerCannotEscapeBuffer(t *testing.T) {
	var flushErr, hijackErr, deadlineErr error
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		fmt.Fprint(w, "partial")
		flushErr = rc.Flush()
		_, _, hijackErr = rc.Hijack()
		deadlineErr = rc.SetWriteDeadline(time.Now().Add(time.Hour))
		if _, ok := w.(http.Flusher); ok {
			t.Error("the fenced ResponseWriter is an http.Flusher")
		}
		w.WriteHeader(http.StatusSwitchingProtocols)
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), next))
	defer srv.Close()
	resp, body := putWithToken(t, srv.Client(), srv.URL+"/a", "7")
	if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get(fence.RefusedHeader) != "invalid-status" || strings.Contains(body, "partial") {
		t.Errorf("101 after a body: %d %q %q, want 500 invalid-status without the body", resp.StatusCode, resp.Header.Get(fence.RefusedHeader), body)
	}
	for name, err := range map[string]error{"Flush": flushErr, "Hijack": hijackErr, "SetWriteDeadline": deadlineErr} {
		if !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("%s through the fence: %v, want http.ErrNotSupported", name, err)
		}
	}
}

// Claim 9: token headers at the edges of "one positive decimal int64".
func TestReview_HandlerTokenEdges(t *testing.T) {
	mem := fence.NewMemory()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	srv := httptest.NewServer(fence.Handler(mem, next))
	defer srv.Close()
	for _, c := range []struct {
		tokens []string
		status int
	}{
		{[]string{"9223372036854775807"}, http.StatusOK},
		{[]string{"9223372036854775806"}, http.StatusConflict},
		{[]string{"9223372036854775807"}, http.StatusOK}, // equal: admitted
		{[]string{"9223372036854775808"}, http.StatusBadRequest},
		{[]string{"-1"}, http.StatusBadRequest},
		{[]string{"0"}, http.StatusBadRequest},
		{[]string{"5, 6"}, http.StatusBadRequest},
		{[]string{"0x10"}, http.StatusBadRequest},
		{[]string{"5", "9223372036854775807"}, http.StatusBadRequest},
	} {
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, srv.URL+"/m", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range c.tokens {
			req.Header.Add(fence.Header, v)
		}
		if resp, _ := roundTrip(t, srv.Client(), req); resp.StatusCode != c.status {
			t.Errorf("tokens %q: %d, want %d", c.tokens, resp.StatusCode, c.status)
		}
	}
	// Two header lines whose names differ only in case are two values of
	// one header on the server: 400, not the first or the last.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /m HTTP/1.1\r\nHost: x\r\nZklock-Token: 9223372036854775807\r\nzklock-token: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("two token lines differing in case: %d, want 400", resp.StatusCode)
	}
}

// Claim 8 through Handler: a path of exactly 1,024 bytes ending in a
// multi-byte rune is admitted; one byte more (the rune straddling the
// limit) is 400.
func TestReview_HandlerResourceLimitMultibyte(t *testing.T) {
	mem := fence.NewMemory()
	srv := httptest.NewServer(fence.Handler(mem, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	defer srv.Close()
	at := "/" + strings.Repeat("a", 1024-1-3) + "€"   // 1,024 bytes
	over := "/" + strings.Repeat("a", 1024-1-2) + "€" // 1,025 bytes
	for _, c := range []struct {
		path   string
		status int
	}{{at, http.StatusOK}, {over, http.StatusBadRequest}} {
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, srv.URL+(&urlPath{c.path}).String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(fence.Header, "3")
		if resp, _ := roundTrip(t, srv.Client(), req); resp.StatusCode != c.status {
			t.Errorf("path of %d bytes: %d, want %d", len(c.path), resp.StatusCode, c.status)
		}
	}
	if mem.Highest(at) != 3 || mem.Highest(over) != 0 {
		t.Errorf("highest: %d at the limit, %d over it", mem.Highest(at), mem.Highest(over))
	}
}

// Claim 12: a 303 (the method changes to GET) and a 301 redirect carry the
// token the request was first sent with; while the hold changed, neither
// is sent.
func TestReview_TransportRedirectMethodChange(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		var got []string
		h := new(holderVar)
		h.v.Store(100)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = append(got, r.Method+" "+r.Header.Get(fence.Header))
			if r.URL.Path == "/from" {
				if r.URL.Query().Get("change") == "1" {
					h.v.Store(200)
				}
				http.Redirect(w, r, "/to", code)
			}
		}))
		c := &http.Client{Transport: fence.Transport(h, srv.Client().Transport)}
		resp, _ := roundTrip(t, c, mustReq(t, http.MethodPost, srv.URL+"/from"))
		if want := "[POST 100 GET 100]"; fmt.Sprint(got) != want || resp.StatusCode != http.StatusOK {
			t.Errorf("%d: the server got %q (final %d), want %s", code, got, resp.StatusCode, want)
		}
		got = nil
		_, err := c.Do(mustReq(t, http.MethodPost, srv.URL+"/from?change=1"))
		if !errors.Is(err, fence.ErrHoldChanged) || fmt.Sprint(got) != "[POST 100]" {
			t.Errorf("%d with the hold changed to 200: %v; the server got %q", code, err, got)
		}
		srv.Close()
	}
}

// Claim 12: "a token the caller set is sent only while the holder holds
// it", set under a key that is not canonical. It is sent beside the
// holder's, and the fenced server answers 400, not the handler.
func TestReview_TransportPinnedNonCanonical(t *testing.T) {
	var handled atomic.Int32
	mem := fence.NewMemory()
	srv := httptest.NewServer(fence.Handler(mem, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handled.Add(1) })))
	defer srv.Close()
	h := new(holderVar)
	h.v.Store(200)
	c := &http.Client{Transport: fence.Transport(h, srv.Client().Transport)}
	req := mustReq(t, http.MethodPut, srv.URL+"/p")
	req.Header["zklock-token"] = []string{"100"}
	resp, _ := roundTrip(t, c, req)
	if resp.StatusCode == http.StatusOK || handled.Load() != 0 || mem.Highest("/p") != 0 {
		t.Errorf("a request pinned (non-canonically) to 100 while 200 is held: %d, handled %d, highest %d", resp.StatusCode, handled.Load(), mem.Highest("/p"))
	}
}

func mustReq(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, url, strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// urlPath escapes a path for a request URL.
type urlPath struct{ p string }

func (u *urlPath) String() string {
	var b strings.Builder
	for i := 0; i < len(u.p); i++ {
		c := u.p[i]
		if c == '/' || ('a' <= c && c <= 'z') {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// withGot1xx returns ctx with a trace that reports each 1xx response.
func withGot1xx(ctx context.Context, fn func(int, textproto.MIMEHeader)) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error { fn(code, h); return nil },
	})
}
