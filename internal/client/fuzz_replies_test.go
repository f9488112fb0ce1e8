package client

import (
	"encoding/binary"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// live is one request in flight for FuzzReplies, and what its caller
// holds once it has completed.
type live struct {
	r    *request
	call *Call
}

// fuzzRequests are the ordinary requests in flight, xids 1 up, in order:
// every kind of reply body, with watches of every kind.
var fuzzRequests = []struct {
	op    int32
	path  string
	watch WatchKind
	flags int32
	call  bool
}{
	{op: opGetData, path: "/a", watch: WatchData},
	{op: opExists, path: "/b", watch: WatchData},
	{op: opGetChildren2, path: "/a", watch: WatchChildren},
	{op: opCreate2, path: "/a/c", call: true},
	{op: opMulti},
	{op: opGetACL, path: "/a"},
	{op: opSync, path: "/"},
	{op: opAddWatch, path: "/a", watch: WatchPersistent},
	{op: opAddWatch, path: "/", watch: WatchPersistentRecursive, flags: 1},
	{op: opRemoveWatches, path: "/x", flags: removeAny},
	{op: opSetData, path: "/a"},
	{op: opDelete, path: "/a/c"},
	{op: opCreateTTL, path: "/t"},
}

// fuzzClient is a Client with no connection whose reader is fed by hand:
// the requests of fuzzRequests in flight, then a ping, an auth packet and
// a setWatches restoring a watch of every kind, and watches of every kind
// already linked (/x ones removed by the removeWatches).
func fuzzClient() (*Client, []live, []*Watch) {
	c := &Client{log: slog.New(slog.DiscardHandler), ready: make(chan struct{})}
	var ls []live
	var rs []*request
	for i, q := range fuzzRequests {
		r := newRequest(q.op, q.path)
		r.xid, r.flags, r.failedOp = int32(i+1), q.flags, -1
		if q.op == opMulti {
			r.nops = 2
		}
		if q.watch != 0 {
			r.watch = newWatch(c, q.path, q.watch)
		}
		l := live{r: r}
		if q.call {
			l.call = &Call{done: make(chan struct{})}
			r.call = l.call
		}
		ls = append(ls, l)
		rs = append(rs, r)
	}
	ping := newRequest(opPing, "")
	ping.xid, ping.internal = xidPing, true
	auth := newRequest(opAuth, "")
	auth.xid, auth.internal, auth.scheme, auth.data = xidAuth, true, "digest", []byte("u:p")
	sw := newRequest(opSetWatches2, "")
	sw.xid, sw.internal = xidSetWatches, true
	sw.restore = &restore{zxid: 3, data: []string{"/r"}, exist: []string{"/r/e"}, child: []string{"/r"},
		persistent: []string{"/r/p"}, recurse: []string{"/r"}}
	c.in.add(append(rs, ping, auth, sw))
	var linked []*Watch
	for _, p := range []string{"/a", "/a/b", "/r", "/x"} {
		for k := WatchData; k <= WatchPersistentRecursive; k++ {
			w := newWatch(c, p, k)
			c.reg.link(w)
			linked = append(linked, w)
		}
	}
	return c, ls, linked
}

// FuzzReplies feeds arbitrary bytes, in arbitrary chunks, as the server's
// stream after the connect response, to the reader of a client with
// requests of every kind in flight and watches of every kind set: replies,
// watch notifications, restores, anything. Nothing may panic or hang;
// every request completes exactly once (its reply, or ErrConnectionLoss
// once the stream breaks or ends); a multi that succeeded has one result
// per op; every event goes to a watch it concerns, a one-shot watch gets
// at most one, and a watch's end is its last; the last zxid moves only
// with a whole reply to an ordinary request.
func FuzzReplies(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed, uint8(255))
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint8) { feedReplies(t, data, size) })
}

// feedReplies is FuzzReplies's check of one input; it returns the
// requests, completed.
func feedReplies(t *testing.T, data []byte, size uint8) []live {
	c, ls, linked := fuzzClient()
	zxid := int64(0)
	c.cfg.OnReply = func(_, _ time.Time, xid, _ int32, z int64, _ error) {
		if xid > 0 && z > 0 {
			zxid = z
		}
	}
	fr := newFrameReader(&chunks{data: data, size: int(size%64) + 1}, nil)
	rd := &reader{c: c, cn: &conn{fr: fr}, authsLeft: 1}
	for frames := 0; ; frames++ {
		body, err := fr.next()
		if err == nil {
			err = rd.packet(body)
		}
		if err != nil {
			break
		}
		if frames > len(data)/4 {
			t.Fatalf("%d frames from %d bytes", frames, len(data))
		}
	}
	c.in.drain(func(r *request) { c.fail(r, ErrConnectionLoss) })
	if got := c.lastZxid.Load(); got != zxid {
		t.Fatalf("last zxid %d, but the last ordinary reply carried %d", got, zxid)
	}
	for i, l := range ls {
		checkCompleted(t, i, l)
	}
	for _, w := range append(linked, watchesOf(ls)...) {
		checkEvents(t, w)
	}
	return ls
}

// TestFuzzRepliesSeed: FuzzReplies's well-formed seed answers every
// request in flight with success, so that the fuzzer starts from the
// whole reply path (the check above would pass on a stream that breaks at
// once too).
func TestFuzzRepliesSeed(t *testing.T) {
	for i, l := range feedReplies(t, fuzzSeeds()[0], 255) {
		err := l.r.err
		if l.call != nil {
			err = l.call.Err
		}
		if err != nil {
			t.Errorf("request %d (op %d): %v", i, fuzzRequests[i].op, err)
		}
	}
}

// checkCompleted checks that request i completed exactly once.
func checkCompleted(t *testing.T, i int, l live) {
	t.Helper()
	if l.call != nil {
		select {
		case <-l.call.done:
		default:
			t.Fatalf("request %d (call): not completed", i)
		}
		return
	}
	r := l.r
	select {
	case <-r.done:
	default:
		t.Fatalf("request %d (op %d): not completed", i, fuzzRequests[i].op)
	}
	if r.state.Load() != stateDone || r.xid != int32(i+1) {
		t.Fatalf("request %d: completed twice (state %d, xid %d)", i, r.state.Load(), r.xid)
	}
	if r.op == opMulti && r.err == nil && len(r.results) != r.nops {
		t.Fatalf("multi of %d ops succeeded with %d results", r.nops, len(r.results))
	}
}

// watchesOf returns the watches the requests set.
func watchesOf(ls []live) []*Watch {
	var ws []*Watch
	for _, l := range ls {
		if l.call == nil && l.r.watch != nil && l.r.watchSet {
			ws = append(ws, l.r.watch)
		}
	}
	return ws
}

// concerns reports whether an event of type typ on path may reach a watch
// of kind k on watched (ZooKeeper's watch semantics, as route has them).
func concerns(k WatchKind, watched string, typ EventType, path string) bool {
	switch k {
	case WatchData, WatchExist:
		return path == watched && (typ == EventNodeCreated || typ == EventNodeDeleted || typ == EventNodeDataChanged)
	case WatchChildren:
		return path == watched && (typ == EventNodeChildrenChanged || typ == EventNodeDeleted)
	case WatchPersistent:
		return path == watched && typ >= EventNodeCreated && typ <= EventNodeChildrenChanged
	case WatchPersistentRecursive:
		below := path == watched || strings.HasPrefix(path, strings.TrimSuffix(watched, "/")+"/")
		return below && typ >= EventNodeCreated && typ <= EventNodeDataChanged
	}
	return false
}

// checkEvents checks the events queued on w.
func checkEvents(t *testing.T, w *Watch) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	oneShot := w.kind <= WatchChildren
	if oneShot && len(w.q) > 1 {
		t.Fatalf("one-shot %v watch on %s got %d events: %+v", w.kind, w.path, len(w.q), w.q)
	}
	for i, ev := range w.q {
		if ev.Watched != w.path || ev.Kind != w.kind {
			t.Fatalf("%v watch on %s got an event of the %v watch on %s", w.kind, w.path, ev.Kind, ev.Watched)
		}
		if ev.Type == EventNotWatching {
			if i != len(w.q)-1 || !w.ended || ev.Err == nil {
				t.Fatalf("%v watch on %s: an end that is not the last event: %+v", w.kind, w.path, w.q)
			}
			continue
		}
		if !concerns(w.kind, w.path, ev.Type, ev.Path) {
			t.Fatalf("%v watch on %s got %+v", w.kind, w.path, ev)
		}
		if oneShot && !w.ended {
			t.Fatalf("one-shot %v watch on %s fired and did not end", w.kind, w.path)
		}
	}
}

// fuzzSeeds are well-formed streams: every request answered in order,
// with notifications between, and a few broken ones.
func fuzzSeeds() [][]byte {
	frame := func(body []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	hdr := func(xid int32, zxid int64, code int32) []byte {
		return appendInt32(appendInt64(appendInt32(nil, xid), zxid), code)
	}
	stat := make([]byte, 68)
	multiHeader := func(b []byte, typ int32, done bool, code int32) []byte {
		return appendInt32(appendBool(appendInt32(b, typ), done), code)
	}
	event := func(typ EventType, path string) []byte {
		return frame(appendString(appendInt32(appendInt32(hdr(xidNotification, -1, 0), int32(typ)), 3), path))
	}
	bodies := [][]byte{
		append(appendBuffer(nil, []byte("v")), stat...), // getData
		stat, // exists
		append(appendStrings(nil, []string{"b", "c"}), stat...),                                        // children
		append(appendString(nil, "/a/c"), stat...),                                                     // create2
		multiHeader(multiHeader(multiHeader(nil, opCheck, false, 0), opCheck, false, 0), -1, true, -1), // multi: two checks
		append(appendACL(nil, WorldACL(PermAll)), stat...),                                             // getACL
		appendString(nil, "/"), // sync
		nil, nil, nil,          // addWatch twice, removeWatches
		stat,                                     // setData
		nil,                                      // delete
		append(appendString(nil, "/t"), stat...), // createTTL
	}
	var ok []byte
	ok = append(ok, frame(hdr(xidAuth, 0, 0))...)
	ok = append(ok, frame(hdr(xidPing, 9, 0))...)
	ok = append(ok, event(EventNodeDataChanged, "/r")...)
	ok = append(ok, frame(hdr(xidSetWatches, 50, 0))...)
	for i, b := range bodies {
		if i == 3 {
			ok = append(ok, event(EventNodeChildrenChanged, "/a")...)
			ok = append(ok, event(EventNodeCreated, "/a/b/c")...)
		}
		ok = append(ok, frame(append(hdr(int32(i+1), int64(10+i), 0), b...))...)
	}
	failed := append(frame(hdr(xidSetWatches, 60, -6)), frame(hdr(1, 11, -101))...)
	failed = append(failed, event(EventNodeDeleted, "/a")...)
	short := frame(append(hdr(1, 12, 0), appendInt32(nil, 1<<20)...))
	// The restore answered last, with the server's newest zxid.
	var late []byte
	for i, b := range bodies {
		late = append(late, frame(append(hdr(int32(i+1), int64(10+i), 0), b...))...)
	}
	late = append(late, frame(hdr(xidSetWatches, 99, 0))...)
	// A multi of two ops answered with no result.
	var noResult []byte
	for i, b := range bodies[:5] {
		if i == 4 {
			b = multiHeader(nil, -1, true, -1)
		}
		noResult = append(noResult, frame(append(hdr(int32(i+1), int64(10+i), 0), b...))...)
	}
	return [][]byte{ok, failed, short, late, noResult, ok[:len(ok)/2], append(ok[:40:40], 0xff, 0xff, 0xff, 0xff)}
}
