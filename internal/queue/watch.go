package queue

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// MaxWatchedHolders bounds the data watches a Watch sets on holders' nodes
// (a semaphore of a thousand slots would otherwise set a thousand). The
// holders past it are seen changing only when something else changes.
const MaxWatchedHolders = 32

// Watch calls put with the state of the lock path p (see ReadState) at
// once, then again after each change, until ctx ends or the session is
// closed; it returns ctx's error or errs.ErrSessionClosed. put is called
// only with a state unlike the last one put (ages aside), or the first
// after a failed read. A failed read is passed to failed, then retry is
// called (it pauses) before the next read, whose state is put even if
// unchanged: it tells the caller that the failure is over.
//
// It watches the children of p (and of a semaphore's locks and leases),
// p's data (a semaphore's limit), and the data of the first
// MaxWatchedHolders holders' nodes (a revocation request, a release): never
// a waiter's node, so the watcher adds nothing to what the contenders'
// changes cost them. Every session state change wakes it to read again (a
// watch restored after a reconnect is not trusted alone; an expired
// session's are gone).
func Watch(ctx context.Context, conn Conn, p string, kind errs.Kind, retry func(context.Context), put func(State), failed func(error)) error {
	w := &watcher{conn: conn, p: p, kind: kind, kids: map[string]<-chan client.Event{}}
	var last State
	for first := true; ctx.Err() == nil; {
		err := w.round(ctx, func(s State) {
			if first || !Same(s, last) {
				put(s)
			}
			first, last = false, s
		})
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, errs.ErrSessionClosed):
			return err
		case err != nil:
			failed(err)
			retry(ctx)
			first = true
		}
	}
	return ctx.Err()
}

// watcher is one Watch's child watches, kept across rounds: each is set
// again only once it fired (a child watch cannot be removed, and setting
// it again each round would pile up waiters until it fires).
type watcher struct {
	conn Conn
	p    string
	kind errs.Kind
	kids map[string]<-chan client.Event
}

// round sets the watches on p first, then reads it: a change after the
// watches were set fires one, so none is missed between the read and the
// wait. Then it watches the holders' data (from the version read: a write
// since makes the wait return at once) and waits for the first watch to
// fire.
func (w *watcher) round(ctx context.Context, put func(State)) error {
	ctx, cancel := context.WithCancel(ctx)
	wt := &waits{wake: make(chan struct{}, 1)}
	defer w.end(wt, cancel)
	names, exists, err := w.armPath(ctx, wt)
	if err != nil {
		return err
	}
	s, err := readState(ctx, w.conn, w.p, names, w.kind)
	if err != nil {
		return err
	}
	put(s)
	if exists && (s.Kind == errs.Semaphore || w.kind == errs.Semaphore) {
		for _, d := range []string{LeasesChild, LocksChild} {
			if err := w.armChildren(ctx, wt, w.p+"/"+d); err != nil {
				return err
			}
		}
	}
	for _, h := range s.Holders[:min(len(s.Holders), MaxWatchedHolders)] {
		wt.run(ctx, func(ctx context.Context) error {
			_, err := w.conn.WaitData(ctx, h.Path, h.Stat.Version)
			return err
		})
	}
	return wt.wait(ctx)
}

// end stops the round's waits, waits for their goroutines, and forgets
// the child watches that fired.
func (w *watcher) end(wt *waits, cancel context.CancelFunc) {
	cancel()
	wt.wg.Wait()
	for _, d := range wt.fired {
		delete(w.kids, d)
	}
}

// armPath watches p's children and data, or, with no p, its creation, and
// returns its children.
func (w *watcher) armPath(ctx context.Context, wt *waits) (names []string, exists bool, err error) {
	var st *client.Stat
	if ch, ok := w.kids[w.p]; ok {
		names, st, err = w.conn.ChildrenStat(ctx, w.p)
		wt.forward(ctx, w.p, ch)
	} else {
		var ch <-chan client.Event
		names, st, ch, err = w.conn.ChildrenW(ctx, w.p)
		if err == nil {
			w.kids[w.p] = ch
			wt.forward(ctx, w.p, ch)
		}
	}
	switch {
	case errors.Is(err, client.ErrNoNode):
		wt.run(ctx, func(ctx context.Context) error { return w.conn.WaitExists(ctx, w.p) })
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	wt.run(ctx, func(ctx context.Context) error {
		_, err := w.conn.WaitData(ctx, w.p, st.Version)
		return err
	})
	return names, true, nil
}

// armChildren watches the children of dir, unless a watch set earlier has
// not fired yet. A missing dir is fine: its creation changes p's children.
func (w *watcher) armChildren(ctx context.Context, wt *waits, dir string) error {
	ch, ok := w.kids[dir]
	if !ok {
		var err error
		_, _, ch, err = w.conn.ChildrenW(ctx, dir)
		if errors.Is(err, client.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		w.kids[dir] = ch
	}
	wt.forward(ctx, dir, ch)
	return nil
}

// waits are one round's waits, each on a goroutine of its own that wakes
// the round when it returns.
type waits struct {
	wg    sync.WaitGroup
	wake  chan struct{} // capacity 1
	mu    sync.Mutex
	err   error    // the first wait's failure
	fired []string // the child watches that fired
}

func (wt *waits) run(ctx context.Context, f func(context.Context) error) {
	wt.wg.Add(1)
	go func() {
		defer wt.wg.Done()
		if err := f(ctx); err != nil && ctx.Err() == nil {
			wt.mu.Lock()
			wt.err = cmpOr(wt.err, err)
			wt.mu.Unlock()
		}
		wt.signal()
	}()
}

// forward wakes the round when the child watch ch of dir fires, and
// forgets it then.
func (wt *waits) forward(ctx context.Context, dir string, ch <-chan client.Event) {
	wt.run(ctx, func(ctx context.Context) error {
		select {
		case <-ch:
			wt.mu.Lock()
			wt.fired = append(wt.fired, dir)
			wt.mu.Unlock()
		case <-ctx.Done():
		}
		return nil
	})
}

func (wt *waits) signal() {
	select {
	case wt.wake <- struct{}{}:
	default:
	}
}

// wait returns when a wait returned (with its error) or ctx ended.
func (wt *waits) wait(ctx context.Context) error {
	select {
	case <-wt.wake:
	case <-ctx.Done():
		return ctx.Err()
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return wt.err
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Same reports whether a and b show the same: the kind, the limit, and the
// same nodes in the same places with the same data.
func Same(a, b State) bool {
	eq := func(x, y Node) bool { return x.Path == y.Path && string(x.Data) == string(y.Data) }
	return a.Kind == b.Kind && a.Limit == b.Limit &&
		slices.EqualFunc(a.Holders, b.Holders, eq) && slices.EqualFunc(a.Waiting, b.Waiting, eq)
}
