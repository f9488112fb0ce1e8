package client

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// TestHostPacing: every server is tried once at once; after each round
// in which none served the client waits, the delay doubling from 50ms
// to at most 1s, with jitter in [delay/2, delay]; a connection that
// carried a reply and lived at least that 1s resets it, and the next
// attempt waits at most 50ms.
func TestHostPacing(t *testing.T) {
	var h hostList
	h.init([]string{"a:1", "b:1", "c:1"}, backoffMax)
	seen := map[string]bool{}
	for range 3 {
		addr, wait := h.pick()
		if wait != 0 {
			t.Fatalf("first round waits %v", wait)
		}
		seen[addr] = true
	}
	if len(seen) != 3 {
		t.Fatalf("first round tried %v", seen)
	}
	delay := backoffMin
	for round := range 8 {
		for i := range 3 {
			_, wait := h.pick()
			switch {
			case i == 0 && (wait < delay/2 || wait > delay):
				t.Fatalf("round %d waits %v, want within [%v, %v]", round, wait, delay/2, delay)
			case i > 0 && wait != 0:
				t.Fatalf("round %d, attempt %d waits %v", round, i, wait)
			}
		}
		delay = min(2*delay, backoffMax)
	}
	// A connection that carried a reply but lived less than the longest
	// pause is a failed attempt: the pacing goes on growing.
	h.ended(true, backoffMax-time.Millisecond)
	h.ended(false, time.Hour)
	if _, wait := h.pick(); wait < backoffMax/2 || wait > backoffMax {
		t.Fatalf("after connections that did not prove useful the round waits %v, want within [%v, %v]", wait, backoffMax/2, backoffMax)
	}
	h.pick()
	h.pick()
	h.ended(true, backoffMax)
	if _, wait := h.pick(); wait > backoffMin {
		t.Fatalf("the first attempt after a connection that served waits %v", wait)
	}
	for i := range 2 {
		if _, wait := h.pick(); wait != 0 {
			t.Fatalf("attempt %d of the round after a connection that served waits %v", i+2, wait)
		}
	}
	if _, wait := h.pick(); wait < backoffMin/2 || wait > backoffMin {
		t.Fatalf("the second round after a connection that served waits %v", wait)
	}

	// Config.MaxReconnectDelay lowers the bound: a lone server is tried
	// again at most that long after each failed attempt.
	var lone hostList
	lone.init([]string{"a:1"}, 20*time.Millisecond)
	for i := range 10 {
		if _, wait := lone.pick(); i > 0 && (wait < 10*time.Millisecond || wait > 20*time.Millisecond) {
			t.Fatalf("attempt %d waits %v, want within [10ms, 20ms]", i, wait)
		}
	}
}

// TestRoute: a node event reaches the watches ZooKeeper's semantics give
// it, one-shot watches are unlinked, persistent ones stay; a recursive
// watch sees descendants' events but not child-list changes.
func TestRoute(t *testing.T) {
	c := &Client{}
	w := func(path string, kind WatchKind) *Watch {
		x := newWatch(c, path, kind)
		c.reg.link(x)
		return x
	}
	data, exist, kids := w("/a/b", WatchData), w("/a/b", WatchExist), w("/a/b", WatchChildren)
	pers, rec, recRoot := w("/a/b", WatchPersistent), w("/a", WatchPersistentRecursive), w("/", WatchPersistentRecursive)
	other := w("/a/c", WatchData)
	got := func(typ EventType, path string) []*Watch {
		var ws []*Watch
		for _, d := range c.reg.route(nil, typ, path) {
			ws = append(ws, d.w)
		}
		return ws
	}
	if ws := got(EventNodeChildrenChanged, "/a/b"); !slices.Equal(ws, []*Watch{kids, pers}) {
		t.Fatalf("children changed: %v", ws)
	}
	if ws := got(EventNodeDataChanged, "/a/b"); !slices.Equal(ws, []*Watch{data, exist, pers, rec, recRoot}) {
		t.Fatalf("data changed: %v", ws)
	}
	if ws := got(EventNodeDeleted, "/a/b"); !slices.Equal(ws, []*Watch{pers, rec, recRoot}) {
		t.Fatalf("deleted after the one-shot watches fired: %v", ws)
	}
	if ws := got(EventNodeCreated, "/a/b/c/d"); !slices.Equal(ws, []*Watch{rec, recRoot}) {
		t.Fatalf("created below: %v", ws)
	}
	if ws := got(EventNodeDataChanged, "/a/c"); !slices.Equal(ws, []*Watch{other, rec, recRoot}) {
		t.Fatalf("sibling: %v", ws)
	}
	if typ, ok := c.reg.unlink(rec); !ok || typ != removeAny {
		t.Fatalf("unlink of the only watch on /a: %v %v", typ, ok)
	}
	if ws := got(EventNodeCreated, "/a/x"); !slices.Equal(ws, []*Watch{recRoot}) {
		t.Fatalf("after unlink: %v", ws)
	}
	if _, ok := c.reg.unlink(rec); ok {
		t.Fatal("a second unlink asked the server again")
	}
}

// TestUnlinkSharedTables: a watch's server-side removal is asked only when
// no other watch on the path shares the server's table.
func TestUnlinkSharedTables(t *testing.T) {
	c := &Client{}
	link := func(path string, kind WatchKind) *Watch {
		x := newWatch(c, path, kind)
		c.reg.link(x)
		return x
	}
	d1, d2 := link("/n", WatchData), link("/n", WatchData)
	kids := link("/n", WatchChildren)
	if _, ok := c.reg.unlink(d1); ok {
		t.Fatal("removal asked while another caller shares the data watch")
	}
	if typ, ok := c.reg.unlink(d2); !ok || typ != removeData {
		t.Fatalf("last data watch: %v %v", typ, ok)
	}
	p := link("/n", WatchPersistent)
	if _, ok := c.reg.unlink(kids); ok {
		t.Fatal("removal of the child table asked while a persistent watch uses it")
	}
	if typ, ok := c.reg.unlink(p); !ok || typ != removeAny {
		t.Fatalf("last persistent watch: %v %v", typ, ok)
	}
}

// TestRestoreBatches: the watches to restore are split into setWatches
// requests of at most setWatchesBatch bytes of paths, each kind in its
// list, setWatches2 only for persistent ones.
func TestRestoreBatches(t *testing.T) {
	c := &Client{}
	long := "/" + string(bytes.Repeat([]byte("p"), 1000))
	n := 3 * setWatchesBatch / 1000
	for i := range n {
		c.reg.link(newWatch(c, long+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), WatchKind(1+i%3)))
	}
	rs := c.reg.restores(42)
	total := 0
	for _, r := range rs {
		size := 0
		for _, l := range r.lists() {
			for _, p := range *l {
				size += len(p)
			}
			total += len(*l)
		}
		if size > setWatchesBatch || r.zxid != 42 || r.opcode() != opSetWatches {
			t.Fatalf("batch of %d bytes, zxid %d, opcode %d", size, r.zxid, r.opcode())
		}
	}
	if total != n || len(rs) < 3 {
		t.Fatalf("%d watches in %d batches, want %d in at least 3", total, len(rs), n)
	}
	c.reg.link(newWatch(c, "/p", WatchPersistentRecursive))
	found := false
	for _, r := range c.reg.restores(1) {
		if len(r.recurse) == 1 {
			found = r.opcode() == opSetWatches2
		}
	}
	if !found {
		t.Fatal("a persistent watch is not restored with setWatches2")
	}
}

// TestCodec: what the encoder writes, the decoder reads back, field for
// field; the connect response with and without its readOnly flag.
func TestCodec(t *testing.T) {
	st := Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 6, Aversion: 7, EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 11}
	var b []byte
	b = appendInt64(b, st.Czxid)
	b = appendInt64(b, st.Mzxid)
	b = appendInt64(b, st.Ctime)
	b = appendInt64(b, st.Mtime)
	for _, v := range []int32{st.Version, st.Cversion, st.Aversion} {
		b = appendInt32(b, v)
	}
	b = appendInt64(b, st.EphemeralOwner)
	b = appendInt32(b, st.DataLength)
	b = appendInt32(b, st.NumChildren)
	b = appendInt64(b, st.Pzxid)
	b = appendStrings(b, []string{"x", "", "yz"})
	b = appendBuffer(b, nil)
	b = appendBuffer(b, []byte{})
	b = appendACL(b, DigestACL(PermRead, "u", "p"))
	d := decoder{b: b}
	var got Stat
	d.stat(&got)
	names := d.strings()
	null, empty := d.buffer(), d.buffer()
	acl := d.acl()
	if d.err != nil || got != st || !slices.Equal(names, []string{"x", "", "yz"}) || null != nil || empty == nil || len(empty) != 0 ||
		!slices.Equal(acl, DigestACL(PermRead, "u", "p")) || len(d.b) != 0 {
		t.Fatalf("decoded %+v %q %v %v %v, err %v, %d left", got, names, null, empty, acl, d.err, len(d.b))
	}
	if d.int32(); d.err == nil {
		t.Fatal("read past the end without an error")
	}

	resp := appendInt32(nil, 0)
	resp = appendInt32(resp, 4000)
	resp = appendInt64(resp, 0x1234)
	resp = appendBuffer(resp, bytes.Repeat([]byte{7}, 16))
	for _, body := range [][]byte{resp, appendBool(resp, false)} {
		r, err := decodeConnectResponse(body)
		if err != nil || r.timeout != 4*time.Second || r.sessionID != 0x1234 || len(r.password) != 16 || r.expired() {
			t.Fatalf("connect response: %+v %v", r, err)
		}
	}
	if _, err := decodeConnectResponse(resp[:10]); err == nil {
		t.Fatal("a short connect response decoded")
	}
}
