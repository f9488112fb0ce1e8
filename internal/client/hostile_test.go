package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"
)

// TestShortMultiReply: a multi reply with fewer results than the ops sent
// is a broken stream, not a success: the multi fails with
// ErrConnectionLoss (its outcome is unknown) and the connection is left.
func TestShortMultiReply(t *testing.T) {
	f := startFake(t, func(conn int, xid, op int32, w io.Writer) {
		if op == opMulti { // no result at all: the done header alone
			_, _ = w.Write(reply(xid, 0, appendInt32(appendBool(appendInt32(nil, -1), true), -1)))
			return
		}
		_, _ = w.Write(reply(xid, 0, nil))
	})
	c := dialFake(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.Multi(ctx, CheckOp("/a", -1), CheckOp("/b", -1))
	if !errors.Is(err, ErrConnectionLoss) {
		t.Fatalf("multi of 2 ops answered with none: %d results, err %v", len(res), err)
	}
}

// TestTrickledFrame: a server that sends a reply one byte a second never
// completes a frame within the read timeout; the client must leave the
// connection then (the request fails with ErrConnectionLoss), not when the
// caller's ctx ends.
func TestTrickledFrame(t *testing.T) {
	f := startFake(t, func(conn int, xid, op int32, w io.Writer) {
		if op != opGetData {
			_, _ = w.Write(reply(xid, 0, nil))
			return
		}
		body := appendBuffer(nil, []byte("d"))
		body = append(body, make([]byte, 68)...)
		for _, b := range reply(xid, 0, body) {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	})
	c := dialFake(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err := c.Get(ctx, "/n")
	took := time.Since(start)
	read := (&conn{timeout: c.Timeout()}).readTimeout()
	if !errors.Is(err, ErrConnectionLoss) || took > 3*read {
		t.Fatalf("get answered one byte a second: %v after %v (read timeout %v)", err, took, read)
	}
	t.Logf("the trickled connection was left after %v (read timeout %v)", took, read)
}

// allocated returns the bytes allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileFrame is a reply frame of size bytes whose body is a vector of
// as many empty strings as fit (or ACLs of empty strings, for acl): the
// densest encoding of elements the decoder must allocate for.
func hostileFrame(size int, acl bool) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(size))
	b = appendInt32(appendInt64(appendInt32(b, 1), 5), 0) // xid 1, zxid 5, err 0
	elem := 4
	if acl {
		elem = 12
	}
	b = appendInt32(b, int32((size-20)/elem))
	return append(b, make([]byte, size-20)...)
}

// TestHostileFrameAllocation: what a reply can make the client allocate
// is bounded by its size, and its size by the frame limit (jute.maxbuffer,
// as ZooKeeper's client): a 63 MiB listing of empty names (16.7 million
// strings, 256 MiB) is refused unread, and a listing or ACL of the largest
// size accepted costs at most 4 bytes for each byte of it, beside the
// frame's own buffer.
func TestHostileFrameAllocation(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		op   int32
	}{
		{"children 63 MiB", 63 << 20, opGetChildren2},
		{"children at the limit", maxFrame, opGetChildren2},
		{"acl at the limit", maxFrame, opGetACL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := hostileFrame(tc.size, tc.op == opGetACL)
			var err error
			var kept any
			n := allocated(func() {
				fr := newFrameReader(bytes.NewReader(in), nil)
				var body []byte
				if body, err = fr.next(); err != nil {
					return
				}
				d := decoder{b: body}
				decodeReplyHeader(&d)
				r := &request{op: tc.op}
				decodeReply(&d, r)
				kept, err = [2]any{r.children, r.acls}, d.err
			})
			_ = kept
			// 4 bytes for each byte of body decoded, the frame's own
			// buffer, and the reader's initial one (and their rounding up
			// to whole pages).
			limit := uint64(5*min(tc.size, maxFrame) + frameBuf + 32<<10)
			t.Logf("%d-byte frame: %d bytes allocated (limit %d), err %v", tc.size, n, limit, err)
			if n > limit {
				t.Fatalf("a %d-byte frame allocated %d bytes", tc.size, n)
			}
			if tc.size > maxFrame && !errors.Is(err, errShort) {
				t.Fatalf("a %d-byte frame was read: %v", tc.size, err)
			}
		})
	}
}
