package client_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// wait waits for k to complete, failing the test after waitLimit.
func wait(t testing.TB, k *client.Call) *client.Call {
	t.Helper()
	select {
	case <-k.Done():
		return k
	case <-bounded(t).Done():
		t.Fatal("the call did not complete")
		return nil
	}
}

// TestGoPipeline: a container create, a create under it and the
// container's listing, queued one after the other without waiting, are
// all on the wire before any reply (the server is blackholed until then):
// one round trip. They are answered in order: the listing shows the node
// the create made, whose Stat came with the create.
func TestGoPipeline(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	c := dial(t, p.Addrs(), client.Config{})
	dir := root(t, c) + "/box"

	p.Blackhole()
	box := c.GoCreate(dir, nil, client.ModeContainer, open)
	node := c.GoCreate(dir+"/n-", []byte("d"), client.ModeEphemeralSequential, open)
	list := c.GoChildren(dir)
	waitInFlight(t, c, 3)
	select {
	case <-box.Done():
		t.Fatal("a call completed while the server was blackholed")
	default:
	}
	p.Heal()
	for _, k := range []*client.Call{box, node, list} {
		if err := wait(t, k).Err; err != nil {
			t.Fatalf("pipelined call: %v", err)
		}
	}
	if box.Path != dir || !strings.HasPrefix(node.Path, dir+"/n-") {
		t.Fatalf("created %q and %q", box.Path, node.Path)
	}
	if node.Stat.EphemeralOwner != c.SessionID() || node.Stat.Czxid <= box.Stat.Czxid {
		t.Fatalf("the create's Stat: owner 0x%x (session 0x%x), czxid %d after the container's %d",
			node.Stat.EphemeralOwner, c.SessionID(), node.Stat.Czxid, box.Stat.Czxid)
	}
	if name := node.Path[len(dir)+1:]; !slices.Equal(list.Children, []string{name}) {
		t.Fatalf("the listing behind the create: %v, want [%s]", list.Children, name)
	}
	if list.Stat.NumChildren != 1 {
		t.Fatalf("the listed node's Stat: %d children", list.Stat.NumChildren)
	}
}

// TestGoOutcomes: a Call is never left without an outcome: a server error,
// a request refused before it is sent, a connection lost while it was in
// flight, and a client closed.
func TestGoOutcomes(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	c := dial(t, p.Addrs(), client.Config{})
	dir := root(t, c)
	var ze *client.Error
	if k := wait(t, c.GoCreate(dir+"/none/x", nil, client.ModeEphemeral, open)); !errors.Is(k.Err, client.ErrNoNode) ||
		!errors.As(k.Err, &ze) || ze.Op != "create" || ze.Path != dir+"/none/x" {
		t.Fatalf("create without a parent: %v", k.Err)
	}
	if k := wait(t, c.GoChildren("relative")); !errors.Is(k.Err, client.ErrBadArguments) {
		t.Fatalf("children of a relative path: %v", k.Err)
	}
	if k := wait(t, c.GoCreate(dir+"/ttl", nil, client.ModePersistentTTL, open)); !errors.Is(k.Err, client.ErrBadArguments) {
		t.Fatalf("a TTL mode: %v", k.Err)
	}
	p.ResetAfterRequest(func(op int32) bool { return op == 15 }) // create2
	if k := wait(t, c.GoCreate(dir+"/lost", nil, client.ModePersistent, open)); !errors.Is(k.Err, client.ErrConnectionLoss) {
		t.Fatalf("a create whose connection was lost: %v", k.Err)
	}
	c.Close()
	if k := wait(t, c.GoChildren(dir)); !errors.Is(k.Err, client.ErrClosed) {
		t.Fatalf("a call after Close: %v", k.Err)
	}
}
