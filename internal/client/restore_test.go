package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// each runs f(0..n-1) from a few goroutines (the requests pipeline on the
// connection) and returns the first error.
func each(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var first error
	var mu sync.Mutex
	next := atomic.Int64{}
	for range min(n, 16) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// longName is a child name of about size bytes, numbered i: watched
// paths that long make a restore span several setWatches packets (each
// carries at most 128 KiB of paths).
func longName(size, i int) string {
	return fmt.Sprintf("%s-%04d", strings.Repeat("w", size-5), i)
}

// cutOff disconnects c (behind p) and keeps it disconnected: new
// connections are refused until p.Refuse(false).
func cutOff(t *testing.T, p *zktest.Proxy, st *states) {
	t.Helper()
	n, _ := st.count(client.StateDisconnected)
	p.Refuse(true)
	p.Reset()
	st.wait(t, client.StateDisconnected, n+1)
}

// TestSplitRestoreKeepsZxid: 1,000 data watches, or 1,000 child watches,
// on paths of ~200 bytes (over 128 KiB: a restore of two setWatches
// packets), every node changed while the client is cut off, and the next
// connection cut right after the first setWatches reply. The second
// packet is restored on the third connection; it must carry the zxid the
// client had read before the changes, not the one of the setWatches reply
// (the server's newest), or the server fires none of its watches. Every
// watch must fire.
func TestSplitRestoreKeepsZxid(t *testing.T) {
	kinds := []struct {
		name  string
		watch func(ctx context.Context, c *client.Client, path string) (*client.Watch, error)
		fire  func(ctx context.Context, other *client.Client, path string) error
		typ   client.EventType
	}{
		{"data", func(ctx context.Context, c *client.Client, path string) (*client.Watch, error) {
			_, _, w, err := c.GetW(ctx, path)
			return w, err
		}, func(ctx context.Context, other *client.Client, path string) error {
			_, err := other.Set(ctx, path, []byte("x"), -1)
			return err
		}, client.EventNodeDataChanged},
		{"children", func(ctx context.Context, c *client.Client, path string) (*client.Watch, error) {
			_, _, w, err := c.ChildrenW(ctx, path)
			return w, err
		}, func(ctx context.Context, other *client.Client, path string) error {
			_, _, err := other.Create(ctx, path+"/c", nil, client.ModePersistent, open)
			return err
		}, client.EventNodeChildrenChanged},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := zktest.NewProxy(t, shared.Servers())
			st := newStates()
			c := dial(t, p.Addrs(), client.Config{OnState: st.on})
			other := dial(t, nil, client.Config{})
			ctx := bounded(t)
			dir := root(t, c)
			const n = 1000
			paths := make([]string, n)
			watches := make([]*client.Watch, n)
			err := each(n, func(i int) error {
				paths[i] = dir + "/" + longName(200-len(dir), i)
				if _, _, err := c.Create(ctx, paths[i], nil, client.ModePersistent, open); err != nil {
					return err
				}
				w, err := k.watch(ctx, c, paths[i])
				watches[i] = w
				return err
			})
			if err != nil {
				t.Fatal(err)
			}

			cutOff(t, p, st)
			if err := each(n, func(i int) error { return k.fire(ctx, other, paths[i]) }); err != nil {
				t.Fatal(err)
			}
			connected, _ := st.count(client.StateConnected)
			var replies atomic.Int32
			p.ResetAfterReply(func(xid int32) bool { return xid == -8 && replies.Add(1) == 1 })
			p.Refuse(false)
			st.wait(t, client.StateConnected, connected+2) // the cut connection, then the next
			if replies.Load() == 0 {
				t.Fatal("the connection was not cut after a setWatches reply")
			}
			if err := c.Sync(ctx, "/"); err != nil { // every restore's reply (and event) is read
				t.Fatal(err)
			}
			lost := 0
			for i, w := range watches {
				if !pending(w) {
					lost++
					continue
				}
				if ev := next(t, w); ev.Type != k.typ {
					t.Errorf("watch %d: %+v", i, ev)
				}
			}
			if lost > 0 {
				t.Fatalf("%d of %d %s watches never fired", lost, n, k.name)
			}
		})
	}
}

// expectation is a watch and the event it must get after the restore:
// one-shot watches the change made while the client was cut off; a
// persistent watch nothing for that (the server re-adds it without
// catching up), then exactly one event for a change made afterwards.
type expectation struct {
	w          *client.Watch
	typ        client.EventType
	persistent string // the node a persistent watch is on, set after the restore
}

// TestRestoreEveryDropPoint: data, exist, child, persistent and recursive
// watches on paths of ~1,000 bytes, so that restoring them takes three
// setWatches packets, every node changed while the client is cut off; the
// next connection is cut at each boundary of the restore in turn: after
// the i-th setWatches request reached the server (its reply lost), and
// after the i-th reply reached the client. After the final restore every
// one-shot watch has fired once with its change, and every persistent
// watch is live again and fires once per change.
func TestRestoreEveryDropPoint(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	// A credential: the auth packet goes first on every connection, then
	// the restore.
	c := dial(t, p.Addrs(), client.Config{OnState: st.on, Credentials: []client.Credential{{Scheme: "digest", Auth: []byte("u:p")}}})
	other := dial(t, nil, client.Config{})
	base := root(t, c)
	const packets = 3
	for _, after := range []string{"request", "reply"} {
		for i := 1; i <= packets; i++ {
			t.Run(fmt.Sprintf("%s%d", after, i), func(t *testing.T) {
				ctx := bounded(t)
				dir := fmt.Sprintf("%s/%s%d", base, after, i)
				if _, _, err := c.Create(ctx, dir, nil, client.ModePersistent, open); err != nil {
					t.Fatal(err)
				}
				exp, change := setWatches(t, c, dir)
				cutOff(t, p, st)
				if err := each(len(change), func(k int) error { return change[k](other) }); err != nil {
					t.Fatal(err)
				}
				connected, _ := st.count(client.StateConnected)
				var seen atomic.Int32
				if after == "request" {
					p.ResetAfterRequest(func(op int32) bool {
						return (op == 101 || op == 105) && seen.Add(1) == int32(i)
					})
				} else {
					p.ResetAfterReply(func(xid int32) bool { return xid == -8 && seen.Add(1) == int32(i) })
				}
				p.Refuse(false)
				st.wait(t, client.StateConnected, connected+2)
				if seen.Load() < int32(i) {
					t.Fatalf("the restore had %d packets, fewer than %d", seen.Load(), i)
				}
				checkRestored(t, c, other, exp)
			})
		}
	}
}

// setWatches sets the watches of TestRestoreEveryDropPoint under dir and
// returns them with the changes that fire the one-shot ones.
func setWatches(t *testing.T, c *client.Client, dir string) ([]expectation, []func(*client.Client) error) {
	t.Helper()
	ctx := bounded(t)
	const per = 70 // of each of four kinds, ~1,000 bytes each: 280 KB, three packets
	name := func(kind string, i int) string { return dir + "/" + kind + longName(1000-len(dir)-2, i) }
	exp := make([]expectation, 4*per)
	change := make([]func(*client.Client) error, 3*per)
	err := each(per, func(i int) error {
		d, e, ch, ps := name("d", i), name("e", i), name("c", i), name("p", i)
		for _, n := range []string{d, ch, ps} {
			if _, _, err := c.Create(ctx, n, nil, client.ModePersistent, open); err != nil {
				return err
			}
		}
		_, _, dw, err := c.GetW(ctx, d)
		if err != nil {
			return err
		}
		_, _, ew, err := c.ExistsW(ctx, e)
		if err != nil {
			return err
		}
		_, _, cw, err := c.ChildrenW(ctx, ch)
		if err != nil {
			return err
		}
		pw, err := c.AddWatch(ctx, ps, i%7 == 0) // a few recursive
		if err != nil {
			return err
		}
		exp[4*i] = expectation{w: dw, typ: client.EventNodeDataChanged}
		exp[4*i+1] = expectation{w: ew, typ: client.EventNodeCreated}
		exp[4*i+2] = expectation{w: cw, typ: client.EventNodeChildrenChanged}
		exp[4*i+3] = expectation{w: pw, typ: client.EventNodeDataChanged, persistent: ps}
		change[3*i] = func(o *client.Client) error { _, err := o.Set(ctx, d, []byte("x"), -1); return err }
		change[3*i+1] = func(o *client.Client) error {
			_, _, err := o.Create(ctx, e, nil, client.ModePersistent, open)
			return err
		}
		change[3*i+2] = func(o *client.Client) error {
			_, _, err := o.Create(ctx, ch+"/c", nil, client.ModePersistent, open)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return exp, change
}

// checkRestored checks exp once the client is back: every one-shot watch
// fired exactly with its change; no persistent watch has an event for the
// change it missed, and each fires once for a change made now; then the
// persistent watches are removed.
func checkRestored(t *testing.T, c, other *client.Client, exp []expectation) {
	t.Helper()
	ctx := bounded(t)
	if err := c.Sync(ctx, "/"); err != nil { // every restore's reply (and event) is read
		t.Fatal(err)
	}
	lost := 0
	for _, e := range exp {
		switch {
		case e.persistent != "" && pending(e.w):
			t.Errorf("persistent watch on %s: an event for a missed change: %+v", e.w.Path(), next(t, e.w))
		case e.persistent != "":
		case !pending(e.w):
			lost++
			_ = e.w.Remove(ctx) // not restored again in the next subtest
		default:
			if ev := next(t, e.w); ev.Type != e.typ {
				t.Errorf("%v watch on %s: %+v, want %v", e.w.Kind(), e.w.Path(), ev, e.typ)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d one-shot watches of %d never fired", lost, len(exp)*3/4)
	}
	var ps []expectation
	for _, e := range exp {
		if e.persistent != "" {
			ps = append(ps, e)
		}
	}
	if err := each(len(ps), func(i int) error { _, err := other.Set(ctx, ps[i].persistent, []byte("y"), -1); return err }); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	for _, e := range ps {
		if !pending(e.w) {
			t.Errorf("%v watch on %s: no event after the restore", e.w.Kind(), e.persistent)
			continue
		}
		if ev := next(t, e.w); ev.Type != e.typ || pending(e.w) {
			t.Errorf("%v watch on %s: %+v (another pending: %v)", e.w.Kind(), e.persistent, ev, pending(e.w))
		}
		if err := e.w.Remove(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("remove %s: %v", e.persistent, err)
		}
	}
}
