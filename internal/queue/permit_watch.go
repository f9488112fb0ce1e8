package queue

import (
	"context"
	"errors"

	"github.com/zklock/zklock/internal/session"
)

// Follower is a Conn that can follow a node through the session's
// persistent recursive watch on its directory (session.Conn.Follow): one
// read, then every change of the node until it is deleted, with no request
// to set the watch again. Permits uses it when the Conn has it and the
// server takes persistent watches (ZooKeeper 3.6 and later); otherwise it
// watches with one-shot watches (Conn.ReadWatch), which a holder must set
// again after each change.
type Follower interface {
	// Follow reads path, a node in dir, and follows it: next returns
	// each change as ReadWatch's wait does (Deleted, Released, LookAgain),
	// and may be called again after Released; stop ends the follow. ok
	// is false, with no follow, if the node does not exist. It fails with
	// session.ErrNoPersistent if the server has no persistent watches.
	Follow(ctx context.Context, dir, path string) (data []byte, ok bool, next func(context.Context) (Change, error), stop func(), err error)
}

// predWatch is a watch on a permit node's predecessor: a one-shot one
// (ReadWatch: wait may be called once) or a follow (wait may be called
// again after Released, and stop ends it).
type predWatch struct {
	wait waitFn
	stop func() // nil for a one-shot watch
}

// again reports whether the watch still watches after a Released.
func (w *predWatch) again() bool { return w != nil && w.stop != nil }

// close ends a follow; a one-shot watch is left to fire into nothing, as
// ever.
func (w *predWatch) close() {
	if w != nil && w.stop != nil {
		w.stop()
	}
}

// watchPred reads the node at path, ahead of ours, and watches it: through
// a follow if the Conn has one and the server takes it, else a one-shot
// watch. ok is false, with no watch, if the node is gone.
func (p *Permits) watchPred(ctx context.Context, path string) ([]byte, bool, *predWatch, error) {
	if f, can := p.Conn.(Follower); can {
		data, ok, next, stop, err := f.Follow(ctx, p.Dir, path)
		switch {
		case err == nil && !ok:
			return nil, false, nil, nil
		case err == nil:
			return data, true, &predWatch{wait: next, stop: stop}, nil
		case !errors.Is(err, session.ErrNoPersistent):
			return nil, false, nil, err
		}
	}
	data, ok, wait, err := p.Conn.ReadWatch(ctx, path)
	if err != nil || !ok {
		return nil, ok, nil, err
	}
	return data, true, &predWatch{wait: wait}, nil
}

// released takes in a Released of the predecessor, which published a
// rank below the limit: the bound drops to at most Limit-1. It reports
// whether the bound is exact: no rank the predecessor can publish is
// below it (a rank counts the predecessor's own permits), so no read of
// the rank could lower it.
func (p *Permits) released(ch *chain) bool {
	ch.learn(p.Limit - 1)
	return ch.bound == ch.weight[len(ch.weight)-1]
}
