package zklock

import (
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/zklock/zklock/internal/hold"
)

// mode is what a belief holds.
type mode int

const (
	excl  mode = iota // the exclusive lock of its paths (a write lock, a term, a MultiLock)
	read              // a read lock
	lease             // n leases of a semaphore of 2
)

// belief is one hold the model believes a handle has: granted by a call
// that returned success, until a release says it ended. It counts in the
// checks while its Lost is open and no Break deleted its node.
type belief struct {
	h      *handle
	what   string
	key    any // what a release names: the hold, nil for all of the handle's
	paths  []string
	mode   mode
	n      int
	lost   <-chan struct{}
	nodes  []string
	broken bool         // Break deleted its node: the old holder keeps acting, as Break's doc says
	gen    int64        // the run's fault generation when the call returned (run.gen)
	hs     []*hold.Hold // the holds behind it: once all are released, it ends
}

// granted records a hold a call returned (its loss signal, nodes and
// tokens read at once), and checks at that return that a hold already lost
// is reported (Lost closed) and that the path's exclusive tokens only grow.
// A success whose hold's Lost is closed at its return is judged a
// violation when no fault was under way from the return on (gen: the
// loss came first), and the hold was not released meanwhile (by another
// goroutine sharing the handle).
func (r *run) granted(h *handle, what string, gen int64, hs []*hold.Hold, lost <-chan struct{}, nodes []string, toks []int64, paths []string, m mode, n int) {
	var key any
	if len(hs) > 0 {
		key = hs[0]
	}
	b := &belief{h: h, what: what, key: key, paths: paths, mode: m, n: n, lost: lost, nodes: nodes, gen: gen, hs: hs}
	r.admit(b, toks)
}

func (r *run) admit(b *belief, toks []int64) {
	lostNow, missing := closed(b.lost), r.missing(b.nodes)
	judged := b.gen%2 == 0 && r.gen.Load() == b.gen && !r.applying.Load()
	r.mu.Lock()
	// A hold believed already is a ReentrantMutex's count, or another
	// goroutine's record: it was judged when it was granted.
	seen := len(b.hs) > 0 && r.believed(b.h, b.hs[0])
	excused := len(missing) > 0 && !slices.ContainsFunc(missing, func(n string) bool { return !r.excused[n] })
	r.mu.Unlock()
	if seen {
		return
	}
	if lostNow && judged && !releasedAll(b.hs) {
		r.failf("%s: %s returned success for a hold whose loss came first (its Lost was closed at the return, and no fault came since)", b.h.name, b.what)
	}
	b.broken = excused
	// A goroutine sharing the handle may have released the hold between
	// its placing in the handle and the read of its nodes (its captured
	// Lost stays open: it is the epoch's), even before the call returned
	// (any goroutine may Unlock a shared handle's hold once it is placed):
	// one whose release began by the read is not judged. (A re-entry is
	// judged more closely: reentered.)
	if !lostNow && len(missing) > 0 && judged && !excused && !releasing(b.hs) {
		r.failf("%s: %s returned success with Lost open while its node(s) %v were gone", b.h.name, b.what, missing)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(b.hs) > 0 && r.believed(b.h, b.hs[0]) {
		return // another goroutine of the handle recorded it meanwhile
	}
	if !lostNow && len(missing) == 0 && b.mode == excl {
		for i, p := range b.paths {
			if i < len(toks) && toks[i] <= r.lastTok[p] {
				r.mu.Unlock()
				r.failf("%s: %s on %s returned token %#x, not above the last granted there, %#x", b.h.name, b.what, p, toks[i], r.lastTok[p])
				r.mu.Lock()
			}
			r.lastTok[p] = max(r.lastTok[p], toks[i])
		}
	}
	b.h.holds = append(b.h.holds, b)
}

// reentered judges a ReentrantMutex's success that is a re-entry (a
// count of a hold the model believes already): a blocking call returns
// success only while its hold's node stands, so a re-entry on a hold whose
// node is gone (a Break deleted it, a release's reply never came) is a
// violation, unless a fault came during the call (gen: the call started
// after, and returned before, any fault of the run) or the node went by a
// Break while a reply was held back (excused: no client sees that).
func (r *run) reentered(h *handle, what string, gen int64, hd *hold.Hold) {
	if hd == nil || gen%2 != 0 || r.gen.Load() != gen || r.applying.Load() {
		return
	}
	// Read at the return, before the server: a release under way while the
	// owner's count is still above 0 is one the re-entry counted on (review
	// 43m's mutation M9: an Unlock releasing without the handle's lock).
	// Siblings that unlocked the re-entry's count too leave it at 0: theirs.
	relAtReturn := hd.Releasing() && h.re.holdCount() > 0
	missing := r.missing(hd.Nodes())
	r.mu.Lock()
	seen := r.believed(h, hd)
	excused := !slices.ContainsFunc(missing, func(n string) bool { return !r.excused[n] })
	r.mu.Unlock()
	// As in admit: a release by another goroutine of the handle may
	// delete the node before the model hears of it (released); a hold
	// whose release began by the read is not judged, unless the re-entry
	// counted on it (relAtReturn).
	if seen && len(missing) > 0 && !excused && (relAtReturn || !hd.Releasing()) {
		r.failf("%s: %s returned success, a re-entry, while its hold's node(s) %v were gone (Lost closed: %v)", h.name, what, missing, closed(hd.Lost()))
	}
}

// released drops h's belief in key (every belief of h if key is nil) when
// the release ended it: gone, or an error that says it ended.
// Goroutines that share h's primitive share its beliefs: any of them may
// release what another was granted.
func (r *run) released(h *handle, err error, key any, gone bool) {
	if !gone && (err == nil || !releasedBy(err)) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.hs {
		if x.prim == h.prim {
			x.holds = slices.DeleteFunc(x.holds, func(b *belief) bool { return key == nil || b.key == key })
		}
	}
}

// believed reports whether a belief of h's primitive has hd behind it.
// r.mu is held.
func (r *run) believed(h *handle, hd *hold.Hold) bool {
	for _, x := range r.hs {
		if x.prim != h.prim {
			continue
		}
		for _, b := range x.holds {
			if slices.Contains(b.hs, hd) {
				return true
			}
		}
	}
	return false
}

// releasedAll reports whether every hold of hs (at least one) is released.
// releasing reports whether a release of any of hs began: its nodes may
// be gone before the release returns.
func releasing(hs []*hold.Hold) bool {
	return slices.ContainsFunc(hs, func(h *hold.Hold) bool { return h != nil && h.Releasing() })
}

func releasedAll(hs []*hold.Hold) bool {
	return len(hs) > 0 && hold.Released(hs)
}

// missing returns the nodes that are not on the server.
func (r *run) missing(nodes []string) []string {
	var out []string
	for _, n := range nodes {
		if !r.srv.Exists(n) {
			out = append(out, n)
		}
	}
	return out
}

// markBroken marks the beliefs on p whose node is gone after a Break.
func (r *run) markBroken(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.hs {
		for _, b := range h.holds {
			if slices.Contains(b.paths, p) && len(r.missing(b.nodes)) > 0 {
				b.broken = true
			}
		}
	}
}

// check judges the world after a step. A loss is reported by a goroutine
// a moment after the server saw it, so the violations must persist for
// 200ms (polled) to count. While a reply is held back (a slow reply, at
// most slowReply each) the window is stretched, up to 2s: a release whose
// delete's reply is slow shows its node gone with its Lost still open
// until the reply comes.
func (r *run) check() {
	start := time.Now()
	deadline := start.Add(200 * time.Millisecond)
	for {
		v := r.violations()
		if len(v) == 0 {
			return
		}
		if r.slow.Load() > 0 && time.Since(start) < 2*time.Second {
			deadline = time.Now().Add(200 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			for _, s := range v {
				r.failf("%s", s)
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// violations returns what breaks an invariant among the live beliefs: at
// most one exclusive holder and no reader beside it per path, at most 2
// leases per semaphore, and a live hold's nodes on the server.
func (r *run) violations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	excls, reads, leases := map[string][]*handle{}, map[string][]*handle{}, map[string]int{}
	for _, h := range r.hs {
		for _, b := range h.holds {
			if b.broken || closed(b.lost) || releasedAll(b.hs) {
				continue
			}
			if m := r.missing(b.nodes); len(m) > 0 {
				out = append(out, fmt.Sprintf("%s (%s) has Lost open, but its node(s) %v are gone", h.name, b.what, m))
			}
			for _, p := range b.paths {
				switch b.mode {
				case excl:
					excls[p] = append(excls[p], h)
				case read:
					reads[p] = append(reads[p], h)
				case lease:
					leases[p] += b.n
				}
			}
		}
	}
	for p, hs := range excls {
		if len(hs) > 1 {
			out = append(out, fmt.Sprintf("%s: exclusive holders %v, all with Lost open", p, names(hs)))
		}
		// A handle's own read lock beside its write lock is a downgrade.
		if others := slices.DeleteFunc(slices.Clone(reads[p]), func(x *handle) bool { return x.prim == hs[0].prim }); len(others) > 0 {
			out = append(out, fmt.Sprintf("%s: writer %v beside readers %v, all with Lost open", p, names(hs), names(others)))
		}
	}
	for p, n := range leases {
		if n > 2 {
			out = append(out, fmt.Sprintf("%s: %d leases held with Lost open, limit 2", p, n))
		}
	}
	out = append(out, r.ownerNodes()...)
	slices.Sort(out)
	return out
}

// ownerNodes: a ReentrantMutex is one owner, so its session (one
// ReentrantMutex each) never has two nodes in its queue: a second would
// wait behind the owner's own.
func (r *run) ownerNodes() []string {
	var out []string
	for i, c := range r.conns {
		n := 0
		for _, p := range r.srv.Ephemerals(c.SessionID()) {
			if path.Dir(p) == "/re" {
				n++
			}
		}
		if n > 1 {
			out = append(out, fmt.Sprintf("session %d's ReentrantMutex has %d nodes in /re", i, n))
		}
	}
	return out
}

// checkLeftovers checks, once everything was released, that no node of
// our sessions is left, no semaphore lease or lock node of anyone, and no
// watch is set on a path the run used.
func (r *run) checkLeftovers() {
	for i, c := range r.conns {
		if n := r.srv.Ephemerals(c.SessionID()); len(n) > 0 {
			r.failf("session %d left %v after releasing everything", i, n)
		}
	}
	seen := map[string]bool{}
	for _, ch := range r.srv.History() {
		for p := ch.Path; p != "/" && !seen[p]; p = path.Dir(p) {
			seen[p] = true
			if n := r.srv.Watching(p) + r.srv.ChildWatching(p); n > 0 {
				r.failf("%d watches left on %s after releasing everything", n, p)
			}
		}
	}
}

func names(hs []*handle) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.name
	}
	return out
}
