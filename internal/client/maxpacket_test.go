package client_test

import (
	"bytes"
	"errors"
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

// TestRequestOverMaxPacketNotSent: a request one byte over Config.MaxPacket
// fails with ErrRequestTooLarge before it is sent (a server drops the
// connection on reading such a length: on the old code the setData failed
// with ErrConnectionLoss), and the client goes on serving requests.
func TestRequestOverMaxPacketNotSent(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	// setData: xid, opcode, path, data, version.
	data := bytes.Repeat([]byte("z"), client.DefaultMaxPacket-(4+4+4+len(dir)+4+4)+1)
	_, err := c.Set(ctx, dir, data, -1)
	if !errors.Is(err, client.ErrRequestTooLarge) {
		t.Fatalf("set of a %d-byte request: %v, want ErrRequestTooLarge", client.DefaultMaxPacket+1, err)
	}
	if _, _, err := c.Get(ctx, dir); err != nil {
		t.Fatalf("get after the refused set: %v", err)
	}
}
