package chaos

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// testClient opens a client session on servers, closed when the test ends.
func testClient(t *testing.T, servers []string) *client.Client {
	t.Helper()
	cl, err := client.Dial(t.Context(), client.Config{Servers: servers, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

var openACL = client.WorldACL(client.PermAll)

// eventually polls cond every 20ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inTable reports whether the watcher holds p, not yet written out, and
// whether it saw it gone.
func (w *nodeWatcher) inTable(p string) (seen, gone bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.table[p]
	return n != nil, n != nil && n.Gone != 0
}

// The node watcher against a real server: it stamps a peer's node's
// deletion no later than a rival that reads once after its own watch
// fires, leaves zklock's nodes out, keeps watching across a server restart
// (a node deleted meanwhile is still recorded), and follows its directory,
// a container, when the server reaps it and it is made again.
func TestNodeWatcher(t *testing.T) {
	c := zktest.Start(t)
	ctx := t.Context()
	cl := testClient(t, c.Servers())
	const dir = "/nw/locks"
	mkdir := func() {
		t.Helper()
		if _, _, err := cl.Create(ctx, "/nw", nil, client.ModePersistent, openACL); err != nil && !errors.Is(err, client.ErrNodeExists) {
			t.Fatal(err)
		}
		if _, _, err := cl.Create(ctx, dir, nil, client.ModeContainer, openACL); err != nil && !errors.Is(err, client.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	// Names are unique, as Curator's and Kazoo's are (a UUID in each):
	// sequence numbers start again in a remade directory.
	create := func(data string) string {
		t.Helper()
		p, _, err := cl.Create(ctx, dir+"/_c_"+strings.ReplaceAll(data, ":", "")+"-lock-", []byte(data), client.ModeEphemeralSequential, openACL)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mkdir()
	file := filepath.Join(t.TempDir(), nodesFile)
	w, err := startNodeWatcher(ctx, c.Servers(), []string{dir}, file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.close)
	host, _ := os.Hostname()
	peer, mine := create("curator:1"), create(host+":2")
	eventually(t, 10*time.Second, "the watcher lists both nodes", func() bool {
		a, _ := w.inTable(peer)
		b, _ := w.inTable(mine)
		return a && b
	})

	// A rival on its own session: its watch fires, it reads once, and then
	// it would be granted.
	rival := testClient(t, c.Servers())
	_, _, fired, err := rival.ExistsW(ctx, peer)
	if err != nil {
		t.Fatal(err)
	}
	t0 := Now()
	if err := cl.Delete(ctx, peer, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := fired.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rival.Children(ctx, dir); err != nil {
		t.Fatal(err)
	}
	granted := Now()
	if err := cl.Delete(ctx, mine, -1); err != nil {
		t.Fatal(err)
	}

	// A node deleted while the watcher's session waits for its server.
	again := create("kazoo:3")
	eventually(t, 10*time.Second, "the watcher lists the third node", func() bool { s, _ := w.inTable(again); return s })
	if err := c.Server(0).Kill(); err != nil {
		t.Fatal(err)
	}
	// The node cannot go before its server is back: the client's delete
	// below or, under load, the server expiring the client's session as
	// it restarts, which can come before Start has seen it serve (a make
	// test at load 22: gone 0.42s before Start returned).
	t2 := Now()
	if err := c.Server(0).Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the client deletes the third node after the restart", func() bool {
		err := cl.Delete(ctx, again, -1)
		return err == nil || errors.Is(err, client.ErrNoNode)
	})

	// The directory is reaped once empty (zktest checks containers every
	// second), then made again with a node in it.
	eventually(t, 20*time.Second, "the server reaps the empty container", func() bool {
		_, ok, err := cl.Exists(ctx, dir)
		return err == nil && !ok
	})
	mkdir()
	fourth := create("curator:4")
	eventually(t, 10*time.Second, "the watcher lists the node in the new directory", func() bool { s, _ := w.inTable(fourth); return s })

	w.close()
	got, err := readNodes(file, map[string]bool{peer: true, mine: true, again: true, fourth: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := got[peer]; n.Seen == 0 || n.Seen > t0 || n.Gone < t0 || n.Gone > granted {
		t.Errorf("peer node %+v: want seen before the delete at %d and gone in [%d, %d] (the delete, the rival's grant)", n, t0, t0, granted)
	}
	if n, ok := got[mine]; ok {
		t.Errorf("zklock's node written out: %+v", n)
	}
	if n := got[again]; n.Gone == 0 || n.Gone < t2 {
		t.Errorf("node deleted across the restart %+v: want gone, after the server was killed at %d", n, t2)
	}
	if n := got[fourth]; n.Seen == 0 || n.Gone != 0 {
		t.Errorf("node in the remade directory %+v: want seen, not gone", n)
	}
}
