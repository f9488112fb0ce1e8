package fence_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zklock/zklock/fence"
)

// A handler that fails after sending an informational response (103 Early
// Hints), after a success status or its body, or that writes a status no
// HTTP response can carry, has its write rolled back and the client gets
// an error status, never 200; the 103 reaches the client as a 1xx; a
// handler that succeeds after a 1xx commits with its own status.
func TestHandlerRefusesAfterInformational(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f, db := newFence(t, e, "CREATE TABLE object (name TEXT PRIMARY KEY, token BIGINT NOT NULL)")
			ctx := testCtx(t)
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tok, _ := strconv.ParseInt(r.Header.Get(fence.Header), 10, 64)
				if _, err := fence.Tx(r.Context()).ExecContext(r.Context(), "INSERT INTO object VALUES ($1, $2)", r.URL.Path, tok); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				switch r.URL.Query().Get("do") {
				case "hints-then-fail":
					w.Header().Set("Link", "</style.css>; rel=preload")
					w.WriteHeader(http.StatusEarlyHints)
					http.Error(w, "failed after the hints", http.StatusInternalServerError)
				case "hints-then-ok":
					w.Header().Set("Link", "</style.css>; rel=preload")
					w.WriteHeader(http.StatusEarlyHints)
					w.WriteHeader(http.StatusCreated)
					fmt.Fprint(w, "stored")
				case "invalid":
					w.WriteHeader(42)
					fmt.Fprint(w, "status 42")
				case "fail-then-ok":
					w.WriteHeader(http.StatusInternalServerError)
					w.WriteHeader(http.StatusOK)
					fmt.Fprint(w, "stored?")
				case "ok-then-fail":
					fmt.Fprint(w, "partly written")
					http.Error(w, "failed after writing", http.StatusInternalServerError)
				}
			})
			srv := httptest.NewServer(fence.Handler(f.Keeper(db), next))
			defer srv.Close()
			for _, c := range []struct {
				do     string
				status int
				stored bool
			}{
				{"hints-then-fail", http.StatusInternalServerError, false},
				{"invalid", http.StatusInternalServerError, false},
				{"ok-then-fail", http.StatusInternalServerError, false},
				{"fail-then-ok", http.StatusInternalServerError, false},
				{"hints-then-ok", http.StatusCreated, true},
			} {
				path := "/" + c.do
				status, hints, body := sendTraced(t, srv.Client(), srv.URL+path+"?do="+c.do, "7")
				var n int
				if err := db.QueryRowContext(ctx, "SELECT count(*) FROM object WHERE name = $1", path).Scan(&n); err != nil {
					t.Fatal(err)
				}
				fenceTok := stored(t, db, f, path)
				if status != c.status || (n == 1) != c.stored || (fenceTok == 7) != c.stored {
					t.Errorf("%s: status %d %q, object rows %d, fence %d; want %d, stored %v", c.do, status, body, n, fenceTok, c.status, c.stored)
				}
				if strings.HasPrefix(c.do, "hints") && (len(hints) != 1 || hints[0] != "103 </style.css>; rel=preload") {
					t.Errorf("%s: informational responses %q, want the 103 with its Link", c.do, hints)
				}
			}
		})
	}
}

// sendTraced PUTs to url with token, and returns the final status, the 1xx
// responses seen before it ("code Link") and the body.
func sendTraced(t *testing.T, c *http.Client, url, token string) (int, []string, string) {
	t.Helper()
	var mu sync.Mutex
	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		mu.Lock()
		defer mu.Unlock()
		hints = append(hints, fmt.Sprintf("%d %s", code, h.Get("Link")))
		return nil
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(testCtx(t), trace), http.MethodPut, url, strings.NewReader("v"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(fence.Header, token)
	resp, body := roundTrip(t, c, req)
	mu.Lock()
	defer mu.Unlock()
	return resp.StatusCode, hints, body
}

// The fence's own refusals carry the RefusedHeader, so a client tells a
// stale token's 409 from a 409 of the wrapped handler, which does not.
func TestHandlerRefusalIsMarked(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(fence.RefusedHeader, "forged by the handler")
		http.Error(w, "the handler's own conflict", http.StatusConflict)
	})
	srv := httptest.NewServer(fence.Handler(fence.NewMemory(), next))
	defer srv.Close()
	for _, c := range []struct {
		token  []string
		status int
		mark   string
	}{
		{[]string{"7"}, http.StatusConflict, ""},
		{[]string{"5"}, http.StatusConflict, "stale"},
		{nil, http.StatusPreconditionRequired, "no-token"},
		{[]string{"x"}, http.StatusBadRequest, "invalid-token"},
	} {
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPut, srv.URL+"/a", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range c.token {
			req.Header.Add(fence.Header, v)
		}
		resp, _ := roundTrip(t, srv.Client(), req)
		if resp.StatusCode != c.status || resp.Header.Get(fence.RefusedHeader) != c.mark {
			t.Errorf("token %q: %d, %s %q; want %d, %q", c.token, resp.StatusCode, fence.RefusedHeader, resp.Header.Get(fence.RefusedHeader), c.status, c.mark)
		}
	}
}

// Misused arguments are errors, not panics: a nil Keeper or handler, a
// zero Memory, a nil *Memory.
func TestHandlerNilArguments(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	var nilMem *fence.Memory
	for _, c := range []struct {
		name string
		h    http.Handler
		want int
	}{
		{"nil keeper", fence.Handler(nil, ok), http.StatusInternalServerError},
		{"nil *Memory", fence.Handler(nilMem, ok), http.StatusInternalServerError},
		{"nil handler", fence.Handler(fence.NewMemory(), nil), http.StatusInternalServerError},
		{"zero Memory", fence.Handler(&fence.Memory{}, ok), http.StatusOK},
		{"nil db keeper", fence.Handler(mustFence(t).Keeper(nil), ok), http.StatusInternalServerError},
	} {
		status := func() (status int) {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panicked: %v", c.name, p)
				}
			}()
			w := httptest.NewRecorder()
			r := httptest.NewRequestWithContext(testCtx(t), http.MethodPut, "/a", nil)
			r.Header.Set(fence.Header, "7")
			c.h.ServeHTTP(w, r)
			return w.Code
		}()
		if status != c.want {
			t.Errorf("%s: %d, want %d", c.name, status, c.want)
		}
	}
	if err := (&fence.Memory{}).Do(context.Background(), "r", 3, func(context.Context) error { return nil }); err != nil {
		t.Errorf("zero Memory: %v", err)
	}
	if err := nilMem.Do(context.Background(), "r", 3, func(context.Context) error { return nil }); !errors.Is(err, fence.ErrNilArgument) {
		t.Errorf("nil *Memory: %v, want ErrNilArgument", err)
	}
}

func mustFence(t *testing.T) *fence.Fence {
	f, err := fence.New(fence.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
