package zklock

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// watchRetry is how long WatchLock waits after a read that retrying the
// request did not cure (an ACL refusal, say) before it reads again.
const watchRetry = time.Second

// LockState is a lock path as WatchLock sees it. It is a plain value; the
// slices are the receiver's.
type LockState struct {
	Path string
	// Kind is the kind of primitive on Path: KindMutex (a Mutex,
	// ReentrantMutex or Election, or Curator's or Kazoo's lock), KindRWMutex
	// (its contenders are KindRWMutexRead or KindRWMutexWrite),
	// KindSemaphore (Curator's layout), KindSemaphorePermit or
	// KindMutexSeq (a Mutex WithSequenceLayout), told from the nodes at
	// each read; "" when nobody is there (an empty path reads the same for
	// every kind, and acquisitions keep one kind on a path: ErrWrongKind).
	Kind  Kind
	Limit int // a semaphore's limit; 0 when unknown or not a semaphore
	// Holders hold: the first contender of a Mutex; a writer, or the
	// readers ahead of the first writer (with a downgraded writer's read
	// node), of an RWMutex; the leases of a semaphore within its limit.
	Holders []Contender
	// Waiting are the contenders that do not hold, in the order they will
	// be served (a semaphore's: its queue for leases).
	Waiting []Contender
	// Revoking are the nodes of Holders whose data is a revocation request
	// (Curator's "__REVOKE__": Revoke, Curator's Revoker), in Holders' order.
	Revoking []string
	// Err is set when a read of the path failed after the request's own
	// retries (a refused read: zk.ErrNoAuth, say); the other fields are
	// then the last state read (only Path before the first). The stream
	// goes on: WatchLock reads again a second later, and delivers the next
	// state it reads, Err nil, even if nothing changed.
	Err error
}

// WatchLock watches the lock at path without joining its queue: who holds,
// who waits, the kind, the revocation requests. The channel receives the
// current state at once, then one state per change. Changes are coalesced:
// a slow reader receives the newest state, never a stale backlog, and
// changes that come and go within one read of the path can be missed (the
// server reports that something changed, not each change). The channel is
// closed when ctx ends or the session is closed; WatchLock's goroutines
// have ended by then or end at once.
//
// It sees a contender arrive or leave, a holder release, a semaphore lease
// taken or given back, and a revocation request written into a holder's
// node (of the first 32 holders; a change among the others shows with the
// next change that is seen). It survives a connection loss and an expiry
// of its session: after every session state change it sets its watches
// again and reads the path, and delivers the state if it changed.
//
// It is herd-free for the contenders: it watches the children of path (of
// a semaphore's locks and leases too), path's data (a semaphore's limit)
// and the holders' nodes, never a waiter's node, and its watches are its
// own session's, so no contender is woken by them. A read of the path costs
// one request per contender.
//
// A nil ctx or an invalid path returns ErrInvalidArgument. A failed read
// while watching is delivered as a state with Err set (and logged to the
// session's logger, WithLogger), then retried: the channel is closed only
// when ctx ends or the session is closed. It may be called any number of
// times, concurrently.
func WatchLock(ctx context.Context, s *Session, path string) (<-chan LockState, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if err := checkSession(s); err != nil {
		return nil, err
	}
	if err := queue.CheckPath(path); err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidPath, err)
	}
	box := newLatest[LockState]()
	out := make(chan LockState)
	go func() {
		defer box.close()
		// queue.Watch calls put and failed on this goroutine, one at a time.
		last := LockState{Path: path}
		put := func(st queue.State) {
			last = lockState(path, st)
			box.put(last)
		}
		failed := func(err error) {
			s.opts.logger.Warn("zklock: watching lock", "path", path, "err", err)
			st := last
			st.Err = err
			box.put(st)
		}
		retry := func(ctx context.Context) { sleep(ctx, watchRetry) }
		_ = queue.Watch(ctx, s.c, path, "", retry, put, failed)
	}()
	go box.deliver(ctx, out)
	return out, nil
}

// lockState is the public form of st.
func lockState(p string, st queue.State) LockState {
	out := LockState{Path: p, Kind: Kind(st.Kind), Limit: st.Limit,
		Holders: contenders(st.Holders, true), Waiting: contenders(st.Waiting, false)}
	for _, h := range st.Holders {
		if string(h.Data) == revokeMessage {
			out.Revoking = append(out.Revoking, h.Path)
		}
	}
	return out
}

func contenders(ns []queue.Node, holds bool) []Contender {
	out := make([]Contender, len(ns))
	for i, n := range ns {
		out[i] = contender(path.Dir(n.Path), n.Entry)
		out[i].Holds = holds
	}
	return out
}

// Contenders lists who holds the lock at path and who waits, whatever
// kind of primitive uses it (told from the path's children, as WatchLock
// does): the holders first (Holds set: a Mutex's or an Election's first
// node, an RWMutex's writer or the readers ahead of the first writer, a
// Semaphore's leases within its limit), then the waiters in the order
// they will be served (a Semaphore's: its queue for leases), each with its
// node data. A path with nobody there has none. It reads the path without
// joining its queue: one request per contender.
func Contenders(ctx context.Context, s *Session, path string) ([]Contender, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if err := checkSession(s); err != nil {
		return nil, err
	}
	if err := queue.CheckPath(path); err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidPath, err)
	}
	return contendersAt(ctx, s.conn(), path)
}

// contendersAt is Contenders on conn.
func contendersAt(ctx context.Context, conn queue.Conn, p string) ([]Contender, error) {
	st, err := queue.ReadState(ctx, conn, p, "")
	if err != nil {
		return nil, err
	}
	return append(contenders(st.Holders, true), contenders(st.Waiting, false)...), nil
}
