package client_test

import (
	"errors"
	"testing"

	"github.com/zklock/zklock/internal/client"
)

// TestPersistentWatch: a persistent watch sees every change of its node
// (creation, data, children, deletion, creation again) without being set
// again; a recursive one sees creations, data changes and deletions of
// nodes below it but no child-list changes; Remove ends each with
// ErrWatchRemoved and the server stops sending.
func TestPersistentWatch(t *testing.T) {
	c := dial(t, nil, client.Config{})
	other := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	p := dir + "/p"

	pw, err := c.AddWatch(ctx, p, false)
	if err != nil || pw.Kind() != client.WatchPersistent {
		t.Fatalf("add watch: %v %v", pw, err)
	}
	rw, err := c.AddWatch(ctx, dir, true)
	if err != nil || rw.Kind() != client.WatchPersistentRecursive {
		t.Fatalf("add recursive watch: %v %v", rw, err)
	}
	type want struct {
		typ  client.EventType
		path string
	}
	steps := []struct {
		do        func() error
		direct    *want // what the persistent watch on p sees
		recursive *want // what the recursive watch on dir sees
	}{
		{func() error { _, _, err := other.Create(ctx, p, nil, client.ModePersistent, open); return err },
			&want{client.EventNodeCreated, p}, &want{client.EventNodeCreated, p}},
		{func() error { _, err := other.Set(ctx, p, []byte("1"), -1); return err },
			&want{client.EventNodeDataChanged, p}, &want{client.EventNodeDataChanged, p}},
		{func() error { _, _, err := other.Create(ctx, p+"/c", nil, client.ModePersistent, open); return err },
			&want{client.EventNodeChildrenChanged, p}, &want{client.EventNodeCreated, p + "/c"}},
		{func() error { _, err := other.Set(ctx, p+"/c", []byte("1"), -1); return err },
			nil, &want{client.EventNodeDataChanged, p + "/c"}},
		{func() error { return other.Delete(ctx, p+"/c", -1) },
			&want{client.EventNodeChildrenChanged, p}, &want{client.EventNodeDeleted, p + "/c"}},
		{func() error { return other.Delete(ctx, p, -1) },
			&want{client.EventNodeDeleted, p}, &want{client.EventNodeDeleted, p}},
		{func() error { _, _, err := other.Create(ctx, p, nil, client.ModePersistent, open); return err },
			&want{client.EventNodeCreated, p}, &want{client.EventNodeCreated, p}},
	}
	for i, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		// A sync on the watching client: once it returns, every event
		// the server sent before it is queued (the ordering guarantee),
		// so a missing event is missing, not late.
		if err := c.Sync(ctx, "/"); err != nil {
			t.Fatal(err)
		}
		for _, x := range []struct {
			w    *client.Watch
			want *want
		}{{pw, s.direct}, {rw, s.recursive}} {
			if x.want == nil {
				continue
			}
			if ev := next(t, x.w); ev.Type != x.want.typ || ev.Path != x.want.path || ev.Watched != x.w.Path() || ev.Kind != x.w.Kind() {
				t.Fatalf("step %d: watch on %s got %+v, want %v on %s", i, x.w.Path(), ev, x.want.typ, x.want.path)
			}
		}
		if pending(pw) || pending(rw) {
			t.Fatalf("step %d: an event too many", i)
		}
	}
	if !serverWatches(t, c.SessionID(), p) || !serverWatches(t, c.SessionID(), dir) {
		t.Fatal("the server does not list the persistent watches")
	}
	for _, w := range []*client.Watch{pw, rw} {
		if err := w.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		if ev := next(t, w); ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrWatchRemoved) {
			t.Fatalf("removed persistent watch: %+v", ev)
		}
	}
	if _, err := other.Set(ctx, p, []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if serverWatches(t, c.SessionID(), p) || serverWatches(t, c.SessionID(), dir) {
		t.Fatal("the server still lists the persistent watches after Remove")
	}
}
