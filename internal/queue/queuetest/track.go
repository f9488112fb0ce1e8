package queuetest

import (
	"context"
	"path"
	"slices"

	"github.com/zklock/zklock/internal/queue"
)

// OpAddWatch counts the persistent recursive watches a Persistent Conn
// sets: one per session and directory (counted only: it takes no fault).
const OpAddWatch Op = "addWatch"

// OpTrack is TrackDir, for faults (Before, Err; Lost: the tracking is
// never told of a deletion). It is not a request: it is not counted as
// one by the tests that count requests.
const OpTrack Op = "track"

// Persistent is a Conn that tracks directories through persistent watches
// (queue.Tracker), as the real Conn does against ZooKeeper 3.9 and later.
// A plain Conn has no TrackDir: Permits then uses one-shot watches.
type Persistent struct {
	*Conn
}

var _ queue.Tracker = Persistent{}

// Persistent returns c with TrackDir.
func (c *Conn) Persistent() Persistent { return Persistent{c} }

// tracker is one TrackDir's subscription: the names deleted under its
// directory since its next returned, guarded by the Server's lock.
type tracker struct {
	gone []string
	note chan struct{} // capacity 1
}

// TrackDir subscribes to the deletions of dir's children, as the real
// Conn's does: the first TrackDir of dir in a session counts an
// OpAddWatch. Its next counts as blocked on OpWatch while it waits, and
// says look when the epoch it began in ends.
func (c Persistent) TrackDir(ctx context.Context, dir string) (func(context.Context) ([]string, bool, error), func(), int64, error) {
	f, err := c.begin(ctx, OpTrack, dir)
	if err != nil {
		return nil, nil, 0, err
	}
	if f.Err != nil {
		return nil, nil, 0, f.Err
	}
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := (Watch{c.sid, dir}); !slices.Contains(s.trees, k) {
		s.trees = append(s.trees, k)
		s.calls[OpAddWatch]++
	}
	tr := &tracker{note: make(chan struct{}, 1)}
	if !f.Lost {
		s.trackers[dir] = append(s.trackers[dir], tr)
	}
	stop := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.trackers[dir] = slices.DeleteFunc(s.trackers[dir], func(x *tracker) bool { return x == tr }); len(s.trackers[dir]) == 0 {
			delete(s.trackers, dir)
		}
	}
	return func(ctx context.Context) ([]string, bool, error) { return c.next(ctx, tr, ep) }, stop, ep.sid, nil
}

func (c Persistent) next(ctx context.Context, tr *tracker, ep *epoch) ([]string, bool, error) {
	c.block(OpWatch, +1)
	defer c.block(OpWatch, -1)
	for {
		c.s.mu.Lock()
		gone := tr.gone
		tr.gone = nil
		c.s.mu.Unlock()
		if len(gone) > 0 {
			return gone, false, nil
		}
		select {
		case <-tr.note:
		case <-ep.done:
			return nil, true, nil
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// fireTrackersLocked tells the trackers of p's parent of p's deletion.
func (s *Server) fireTrackersLocked(p string) {
	for _, tr := range s.trackers[path.Dir(p)] {
		tr.gone = append(tr.gone, path.Base(p))
		select {
		case tr.note <- struct{}{}:
		default:
		}
	}
}
