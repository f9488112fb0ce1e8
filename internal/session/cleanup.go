package session

import (
	"strings"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// This file removes what a failed or cancelled acquisition created: a node
// whose create outcome is unknown, a node of ours that must go, waiting for
// the server at most the cleanup grace and then in the background.

// cleanAbandoned waits for the outcome of a create whose caller gave up, and
// removes the node it made, or may have made, returning once it is gone.
func (c *Conn) cleanAbandoned(k *client.Call, path string) {
	select {
	case <-k.Done():
	case <-c.bg.Done():
		return
	}
	switch {
	case k.Err == nil:
		<-c.goDelete(k.Path, k.Stat.EphemeralOwner, 0, false)
	case transient(k.Err):
		c.deletePrefixed(path)
	}
}

// deletePrefixed deletes, once connected, every child of path's parent whose
// name starts with path's protected name, returning once they are gone.
func (c *Conn) deletePrefixed(path string) {
	i := strings.LastIndexByte(path, '/')
	dir, prefix := path[:i], path[i+1:]
	ctx := c.bg
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return
	}
	names, _, err := c.children(ctx, dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			<-c.goDelete(dir+"/"+n, ep.sid, 0, false)
		}
	}
}

// Discard starts a background delete and waits for it at most the cleanup
// grace, so that in the common case (server reachable) the node is gone
// when the failed call returns.
func (c *Conn) Discard(path string, sid int64) {
	c.settle(c.goDelete(path, sid, 0, false), path)
}

// settle waits for a cleanup to finish, for at most the cleanup grace:
// half the session timeout, at most 2s. A cleanup that takes longer (the
// server unreachable) goes on in the background until it succeeds or the
// session ends, which removes the node too.
func (c *Conn) settle(done <-chan struct{}, path string) {
	t := time.NewTimer(cleanupGrace(c.Timeout()))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.log.Warn("zklock: node delete continues in the background", "path", path)
	}
}

// cleanupGrace is how long a failed or cancelled acquisition waits for the
// server to delete what it created before returning anyway.
func cleanupGrace(timeout time.Duration) time.Duration {
	return min(timeout/2, 2*time.Second)
}

// goDelete deletes an ephemeral node of session sid in the background until
// it is gone, the session that owned it is gone (its ephemerals went with
// it), or the Session closes. The returned channel is closed when it stops.
// c.mu may be held. With owned, it first reads the node and deletes it
// only if sid owns it: an ended epoch's node may have been deleted by
// another client (a Break) long ago, and a name of the sequence layout
// repeats once its lock path is reaped and re-created, so the node of that
// name may be a rival's (queue.Seq.Give). It costs a read, at an epoch's
// end only; a rival of the same session is not told apart.
func (c *Conn) goDelete(path string, sid int64, notBefore int64, owned bool) <-chan struct{} {
	done := make(chan struct{})
	if !c.spawn(func() {
		defer close(done)
		if wait := time.Duration(notBefore - c.since(time.Now())); notBefore > 0 && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.bg.Done():
				t.Stop()
				return
			}
		}
		for c.bg.Err() == nil {
			ep, err := c.awaitEpoch(c.bg)
			if err != nil || ep.sid != sid {
				return
			}
			if owned {
				// get retries through connection loss until the Session closes.
				if _, st, err := c.get(c.bg, path); err != nil || st.EphemeralOwner != sid {
					return // gone, a rival's, or closing (Close ends the session's nodes)
				}
			}
			if err := c.delete(c.bg, path, nil); err == nil || !transient(err) {
				return
			}
		}
	}) {
		close(done)
	}
	return done
}
