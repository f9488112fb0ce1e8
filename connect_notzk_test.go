package zklock_test

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Issue 47, a newcomer's pass: NewSession went on trying endpoints it had
// named at WARN as not ZooKeeper: an HTTP server written in Go answers
// nothing to a connect request (it waits for a request line's end), so it
// was asked what it is only after a whole silent attempt, 7.5 s at the
// default session timeout, 15 s for two; one that answers a bare request
// line with an HTTP/0.9 error page (python3 -m http.server) never. When
// every server is known not to be ZooKeeper, NewSession fails at once with
// ErrNotZooKeeper, naming each; beside a live ZooKeeper it connects.
func TestNewSessionFailsFastWhenNoServerIsZooKeeper(t *testing.T) {
	t.Parallel()
	goHTTP := func() string {
		web := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(web.Close)
		return web.Listener.Addr().String()
	}
	for _, tc := range []struct {
		name    string
		servers []string
	}{
		{"an HTTP server written in Go", []string{goHTTP()}},
		{"two of them", []string{goHTTP(), goHTTP()}},
		{"one beside a 400 at once", []string{goHTTP(), badRequestServer(t)}},
		{"an HTTP/0.9 error page", []string{html09Server(t)}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		began := time.Now()
		s, err := zklock.NewSession(ctx, zklock.WithServers(tc.servers...), zklock.WithLogger(slog.New(&arrivals{})))
		took := time.Since(began)
		cancel()
		t.Logf("%s: NewSession returned after %v: %v", tc.name, took.Round(time.Millisecond), err)
		require.Nil(t, s)
		if assert.ErrorIs(t, err, zk.ErrNotZooKeeper, tc.name) {
			for _, addr := range tc.servers {
				assert.Contains(t, err.Error(), addr, tc.name)
			}
		}
		assert.Less(t, took, 3*time.Second, "%s: NewSession kept trying servers it knew were not ZooKeeper", tc.name)
	}

	ctx := ctxFor(t)
	for _, other := range []string{goHTTP(), badRequestServer(t)} {
		began := time.Now()
		s, err := zklock.NewSession(ctx, zklock.WithServers(other, shared(t).Servers()[0]),
			zklock.WithLogger(slog.New(&arrivals{})))
		if !assert.NoError(t, err, "an HTTP server beside a live ZooKeeper") {
			continue
		}
		took := time.Since(began)
		t.Logf("beside %s: connected in %v, timing from %s", other, took.Round(time.Millisecond), s.Client().Timing().Source)
		assert.Less(t, took, 5*time.Second, "an attempt to %s held the connect for a handshake timeout", other)
		m, err := zklock.NewMutex(s, lockPath(t, "lock"))
		require.NoError(t, err)
		require.NoError(t, m.Lock(ctx))
		require.NoError(t, m.Unlock(ctx))
		s.Close()
	}
}

// html09Server answers as python3 -m http.server does: it reads a request
// line up to its end (a newline, or the end of the stream), and answers one
// it cannot parse as HTTP/0.9, with an HTML error page and no status line.
func html09Server(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				if strings.TrimSpace(line) == "" {
					return
				}
				_, _ = c.Write([]byte("<!DOCTYPE HTML>\n<html lang=\"en\">\n<head><title>Error response</title></head>\n" +
					"<body><h1>Error response</h1><p>Error code: 400</p></body>\n</html>\n"))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
