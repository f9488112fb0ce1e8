package main

// The primitives ls recognizes, and how it reads each from its nodes.

import (
	"slices"
	"strconv"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
)

// What ls calls the primitives it finds: the library's type names. A
// Mutex's and an Election's nodes are alike on the wire (both are Curator
// InterProcessMutex contenders), so a "lock-" queue is a "mutex/election"
// unless its holder's node carries the tag only a zklock lock adds to its
// data (see tagged).
const (
	lsMutex           = "mutex"
	lsMutexOrElection = "mutex/election"
	lsElection        = "election" // Curator LeaderLatch: "latch-" nodes
	lsRWMutex         = "rwmutex"  // zklock and Curator; Kazoo's ReadLock/WriteLock too
	lsSemaphore       = "semaphore"
	lsSemQueue        = "semaphore-queue"
)

// tokenShift matches the library's tokens: "the lock node's creation zxid
// shifted left by 12 bits" (Mutex.Token), of the node's first grant as
// Contender.Token has it.
const tokenShift = 12

// found is one primitive that ls found.
type found struct {
	Path    string  `json:"path"`
	Kind    string  `json:"kind"`            // mutex, mutex/election, election, rwmutex or semaphore
	Limit   int     `json:"limit,omitempty"` // of a semaphore, when its path's data says it
	Holders []entry `json:"holders"`         // role is always "holder"
	// WaitingCount is the queue length: contenders that do not hold
	// (status's waiting_count; status lists them as "waiting").
	WaitingCount int `json:"waiting_count"`
	// Foreign is a child of another kind of primitive found beside this
	// one's nodes: the path is misused, and its holders may not exclude
	// each other.
	Foreign string `json:"foreign,omitempty"`
}

// semaphore reads p as a semaphore (Curator InterProcessSemaphoreV2's
// layout) if it has "locks" or "leases" children and either of them holds
// a contender or p's data is a limit, as zklock stores it: a plain
// directory that an application happens to call "locks" is not one.
func (r *reader) semaphore(p string, names []string) (found, bool) {
	hasLeases, hasLocks := slices.Contains(names, queue.LeasesChild), slices.Contains(names, queue.LocksChild)
	if !hasLeases && !hasLocks {
		return found{}, false
	}
	var leases, locks []queue.Contender
	if hasLeases {
		kids, _ := r.children(join(p, queue.LeasesChild))
		leases = queue.Sort(kids, queue.KindLease)
	}
	if hasLocks {
		kids, _ := r.children(join(p, queue.LocksChild))
		locks = queue.Sort(kids, queue.KindLock)
	}
	limit := 0
	if data, _, ok := r.get(p); ok {
		limit, _ = strconv.Atoi(string(data))
		limit = max(limit, 0)
	}
	if len(leases)+len(locks) == 0 && limit == 0 {
		return found{}, false
	}
	f := found{Path: p, Kind: lsSemaphore, Limit: limit, Holders: []entry{}, WaitingCount: len(locks)}
	if c, ok := queue.Foreign(names, []string{queue.LocksChild, queue.LeasesChild}); ok {
		f.Foreign = c.Name
	}
	// Lease nodes beyond the limit are the head waiter's, still counting
	// (as status lists them).
	if limit > 0 && len(leases) > limit {
		leases = leases[:limit]
	}
	for _, c := range leases {
		if zc, _, ok := r.contender(join(p, queue.LeasesChild), c); ok {
			f.Holders = append(f.Holders, newEntry(true, "", zc))
		}
	}
	return f, true
}

// lockQueue reads p as a lock, reader/writer lock or election if its children
// are contenders of a known kind. Only the holders' nodes are read.
func (r *reader) lockQueue(p string, names []string) (found, bool) {
	kind, accept := queueKind(names)
	if kind == "" {
		return found{}, false
	}
	qs := queue.Sort(names, accept...)
	held := make([]bool, len(qs))
	f := found{Path: p, Kind: kind, Holders: []entry{}}
	switch {
	case kind == lsRWMutex:
		held = queue.RWHeld(qs)
	case kind == lsSemQueue:
		held, f.Limit = permitsHeld(qs)
	case len(qs) > 0:
		held[0] = true
	}
	if c, ok := queue.Foreign(names, accept); ok {
		f.Foreign = c.Name
	}
	for i, q := range qs {
		if !held[i] {
			f.WaitingCount++
			continue
		}
		c, raw, ok := r.contender(p, q)
		if !ok {
			continue // gone since the listing
		}
		if kind == lsMutexOrElection && i == 0 && tagged(raw) {
			f.Kind = lsMutex
		}
		mode := ""
		if kind == lsRWMutex {
			mode = rwMode(c)
		}
		f.Holders = append(f.Holders, newEntry(true, mode, c))
	}
	return f, true
}

// permitsHeld tells which nodes of a queue-layout semaphore hold: those
// whose leases fit within the limit their names carry, in queue order.
func permitsHeld(qs []queue.Contender) (held []bool, limit int) {
	held = make([]bool, len(qs))
	used := 0
	for i, q := range qs {
		n, l, ok := queue.PermitWeight(q.Name)
		if !ok {
			continue
		}
		limit = l
		if used += n; used > l {
			break
		}
		held[i] = true
	}
	return held, limit
}

// queueKind tells what kind of queue children of these names form, and
// which node kinds belong to it, in the order detectKind prefers them.
func queueKind(names []string) (string, []string) {
	seen := map[string]bool{}
	for _, n := range names {
		if c, ok := queue.Parse(n); ok {
			seen[c.Kind] = true
		}
	}
	switch {
	case seen[queue.KindRead] || seen[queue.KindWrite]:
		return lsRWMutex, []string{queue.KindRead, queue.KindWrite}
	case seen[queue.KindKazooRLock]:
		return lsRWMutex, []string{queue.KindKazooRLock, queue.KindKazooLock}
	case seen[queue.KindLock] || seen[queue.KindKazooLock]:
		return lsMutexOrElection, []string{queue.KindLock, queue.KindKazooLock}
	case seen[queue.KindLatch]:
		return lsElection, []string{queue.KindLatch}
	case seen[queue.KindPermit]:
		return lsSemQueue, []string{queue.KindPermit}
	}
	return "", nil
}

// tagged reports whether raw node data ends with a tag that only a zklock
// lock's node carries: an exclusive holder that announces its release, or
// a revocable one. An Election's node holds its value exactly (Curator's
// LeaderSelector reads it as the participant id), so a tagged node is a
// lock's; an untagged one may be either, or Curator's or Kazoo's.
func tagged(raw []byte) bool {
	return len(queue.UserData(raw)) != len(raw)
}

// contender reads one node of dir.
func (r *reader) contender(dir string, q queue.Contender) (zklock.Contender, []byte, bool) {
	p := join(dir, q.Name)
	data, st, ok := r.get(p)
	if !ok {
		return zklock.Contender{}, nil, false
	}
	return zklock.Contender{Path: p, Kind: zklock.Kind(queue.KindOf(q)), Seq: q.Seq, Session: st.EphemeralOwner,
		Token: st.Czxid << tokenShift, Created: time.UnixMilli(st.Ctime), Data: queue.UserData(data)}, data, true
}
