package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// walkers is how many requests the walk keeps in flight: ZooKeeper answers
// a session's requests in order, so this only hides the round trips.
const walkers = 8

// walk lists a tree breadth first, at most max nodes read, and collects the
// primitives in it.
type walk struct {
	ctx         context.Context
	conn        *zk.Client
	root        string
	max         int64
	reads       atomic.Int64
	cut         atomic.Bool // max was reached: the listing is incomplete
	rootMissing atomic.Bool

	mu       sync.Mutex
	found    []found
	problems []string // the first few errors; nprob counts them all
	nprob    int
}

// run walks the tree under w.root, level by level, walkers nodes at a
// time.
func (w *walk) run() {
	level := []string{w.root}
	for len(level) > 0 && !w.stopped() {
		var (
			mu   sync.Mutex
			next []string
			wg   sync.WaitGroup
			sem  = make(chan struct{}, walkers)
		)
		for _, p := range level {
			if w.stopped() {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				kids := w.visit(p)
				mu.Lock()
				next = append(next, kids...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		level = next
	}
	slices.SortFunc(w.found, func(a, b found) int { return cmp.Compare(a.Path, b.Path) })
}

func (w *walk) stopped() bool { return w.cut.Load() || w.ctx.Err() != nil }

// visit lists p, records the primitive it is if it is one, and returns the
// children to walk next: those that are not a primitive's own nodes.
func (w *walk) visit(p string) []string {
	r := &reader{walk: w}
	names, ok := r.children(p)
	if !ok {
		return nil
	}
	own := func(string) bool { return false }
	f, ok := r.semaphore(p, names)
	if ok {
		own = func(n string) bool { return n == queue.LocksChild || n == queue.LeasesChild }
	} else {
		f, ok = r.lockQueue(p, names)
	}
	if ok && !r.refused {
		w.add(f)
	}
	var kids []string
	for _, n := range names {
		if _, contender := queue.Parse(n); contender || own(n) || (p == "/" && n == "zookeeper") {
			continue // ephemeral nodes have no children; /zookeeper is the server's
		}
		kids = append(kids, join(p, n))
	}
	return kids
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// take counts one read against the cap, and refuses it once the cap is
// reached or ctx has ended.
func (w *walk) take() bool {
	if w.ctx.Err() != nil {
		return false
	}
	if w.reads.Add(1) > w.max {
		w.cut.Store(true)
		return false
	}
	return true
}

// reader reads one node and, if it is a primitive, its nodes. It remembers
// whether the walk refused one of its reads: a primitive read in part is
// not reported, as a lock whose holder was not read would look free.
type reader struct {
	*walk
	refused bool
}

func (r *reader) children(p string) ([]string, bool) {
	if r.refused = r.refused || !r.take(); r.refused {
		return nil, false
	}
	names, _, err := r.conn.Children(r.ctx, p)
	return names, r.check(p, err)
}

func (r *reader) get(p string) ([]byte, zk.Stat, bool) {
	if r.refused = r.refused || !r.take(); r.refused {
		return nil, zk.Stat{}, false
	}
	data, st, err := r.conn.Get(r.ctx, p)
	return data, st, r.check(p, err)
}

// check records an error; a node deleted since its parent was listed is
// none: it is simply not there.
func (w *walk) check(p string, err error) bool {
	if err == nil {
		return true
	}
	if errors.Is(err, zk.ErrNoNode) && p == w.root {
		w.rootMissing.Store(true)
	}
	if !errors.Is(err, zk.ErrNoNode) && w.ctx.Err() == nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.nprob++; len(w.problems) < 3 {
			w.problems = append(w.problems, fmt.Sprintf("%s: %v", p, err))
		}
	}
	return false
}

func (w *walk) add(f found) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.found = append(w.found, f)
}
