package client_test

import (
	"bytes"
	"testing"

	"github.com/zklock/zklock/internal/client"
)

// TestLargestNodeReadBack: a node holding the most data a server with the
// default jute.maxbuffer accepts in a setData is read back whole, though
// the reply (its data, a Stat and a header) is longer than jute.maxbuffer:
// the client allows 1 KiB over Config.MaxPacket for that.
func TestLargestNodeReadBack(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	// setData: xid, opcode, path, data, version.
	data := bytes.Repeat([]byte("z"), client.DefaultMaxPacket-(4+4+4+len(dir)+4+4))
	if _, err := c.Set(ctx, dir, data, -1); err != nil {
		t.Fatalf("set %d bytes: %v", len(data), err)
	}
	got, _, err := c.Get(ctx, dir)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %d bytes, %v", len(got), err)
	}
	t.Logf("a %d-byte reply (jute.maxbuffer %d) read back", 16+4+len(data)+68, client.DefaultMaxPacket)
}
