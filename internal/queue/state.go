package queue

import (
	"context"
	"errors"
	"strconv"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// What an observer reads of a lock path without joining its queue: which
// kind of primitive uses it, who holds, who waits (State); watch.go
// follows its changes.

// State is a lock path as an observer reads it.
type State struct {
	// Kind is errs.Mutex (a "lock-" queue: a Mutex, ReentrantMutex,
	// Election, or Curator's or Kazoo's lock), errs.RWMutex,
	// errs.Semaphore (Curator's layout) or errs.SemaphorePermit; "" when
	// the kind was to be detected and nobody is there.
	Kind    errs.Kind
	Limit   int    // a semaphore's, when known
	Holders []Node // in queue order
	Waiting []Node // in the order they will be served
}

// Node is one contender's node with its full path.
type Node struct {
	Path string
	Entry
}

// Detect returns the kind of primitive whose nodes are among names, a lock
// path's children: "" when there is none.
func Detect(names []string) errs.Kind {
	kind := errs.Kind("")
	for _, n := range names {
		if n == LocksChild || n == LeasesChild {
			return errs.Semaphore
		}
		c, ok := Parse(n)
		switch {
		case !ok:
		case c.Kind == KindPermit:
			return errs.SemaphorePermit
		case c.Kind == KindSeqLock:
			return errs.MutexSeq
		case c.Kind == KindRead || c.Kind == KindWrite || c.Kind == KindKazooRLock:
			return errs.RWMutex
		case c.Kind == KindLock || c.Kind == KindKazooLock:
			kind = errs.Mutex
		}
	}
	return kind
}

// ReadState reads the state of the lock path p, of kind ("" detects it
// from p's children). A missing path is a free lock.
func ReadState(ctx context.Context, conn Conn, p string, kind errs.Kind) (State, error) {
	names, err := conn.Children(ctx, p)
	if err != nil && !errors.Is(err, client.ErrNoNode) {
		return State{}, err
	}
	return readState(ctx, conn, p, names, kind)
}

// readState is ReadState with p's children already listed.
func readState(ctx context.Context, conn Conn, p string, names []string, kind errs.Kind) (State, error) {
	detect := kind == ""
	if detect {
		kind = Detect(names)
	}
	s := State{Kind: kind}
	var err error
	switch kind {
	case errs.Semaphore:
		err = s.readLeases(ctx, conn, p)
	case errs.SemaphorePermit:
		err = s.readPermits(ctx, conn, p, names)
	case errs.RWMutex:
		err = s.readRW(ctx, conn, p, names)
	case errs.Mutex:
		err = s.readLock(ctx, conn, p, names, KindLock, KindKazooLock)
	case errs.MutexSeq:
		err = s.readLock(ctx, conn, p, CurrentLife(names), KindSeqLock)
	}
	// A kind told only by its contenders' nodes, all gone between the
	// listing and their reads: the path is as free as one with nothing
	// there, and says so the same way.
	if detect && kind != errs.Semaphore && len(s.Holders)+len(s.Waiting) == 0 {
		s.Kind = ""
	}
	return s, err
}

// readLock: the first node of an exclusive queue holds (or is about to
// learn that it does).
func (s *State) readLock(ctx context.Context, conn Conn, p string, names []string, kinds ...string) error {
	ns, err := readNodes(ctx, conn, p, Sort(names, kinds...))
	s.split(ns, func(i int) bool { return i == 0 })
	return err
}

// readRW: see RWHeld. Kazoo's read-write locks are read as such when its
// read nodes are there.
func (s *State) readRW(ctx context.Context, conn Conn, p string, names []string) error {
	accept := []string{KindRead, KindWrite}
	if Detect(names) == errs.RWMutex && len(Sort(names, accept...)) == 0 {
		accept = []string{KindKazooRLock, KindKazooLock}
	}
	ns, err := readNodes(ctx, conn, p, Sort(names, accept...))
	cs := make([]Contender, len(ns))
	for i, n := range ns {
		cs[i] = n.Contender
	}
	held := RWHeld(cs)
	s.split(ns, func(i int) bool { return held[i] })
	return err
}

// RWHeld tells which of a read-write queue's contenders, in queue order,
// hold: a writer when it is first; a reader when no writer is ahead of it,
// except its own write lock that it downgraded from (a read node joined
// beside the first writer, with its sequence number). Kazoo's locks follow
// the same rule, its "__lock__" nodes being the writers.
func RWHeld(cs []Contender) []bool {
	held := make([]bool, len(cs))
	writerAhead := false
	for i, c := range cs {
		write := IsWriter(c)
		held[i] = (write && i == 0) || (!write && (!writerAhead || cs[0].Seq == c.Seq))
		writerAhead = writerAhead || write
	}
	return held
}

// IsWriter tells a read-write queue's writers: Curator's write nodes and
// Kazoo's lock nodes (its WriteLock's).
func IsWriter(c Contender) bool { return c.Kind == KindWrite || c.Kind == KindKazooLock }

// readPermits: the permit nodes carry the limit; those whose permits fit
// within it, in queue order, hold; the rest wait.
func (s *State) readPermits(ctx context.Context, conn Conn, p string, names []string) error {
	cs := Sort(names, KindPermit)
	for _, c := range cs {
		if _, limit, ok := PermitWeight(c.Name); ok {
			s.Limit = limit
			break
		}
	}
	ns, err := readNodes(ctx, conn, p, cs)
	used, full := 0, false
	s.split(ns, func(i int) bool {
		n, _, _ := PermitWeight(ns[i].Name)
		used += n
		full = full || used > s.Limit
		return !full
	})
	return err
}

// readLeases reads Curator's semaphore layout: the limit in p's data, the
// leases under p/leases, the queue under p/locks. Lease nodes beyond the
// limit belong to the client at the head of the queue, which is listed
// among the waiters: so only the first limit lease nodes hold.
func (s *State) readLeases(ctx context.Context, conn Conn, p string) error {
	data, _, err := conn.Get(ctx, p)
	switch {
	case errors.Is(err, client.ErrNoNode):
	case err != nil:
		return err
	default:
		s.Limit, _ = strconv.Atoi(string(data))
		s.Limit = max(s.Limit, 0)
	}
	leases, err := readDir(ctx, conn, p+"/"+LeasesChild, KindLease)
	if err != nil {
		return err
	}
	for i, n := range leases {
		if s.Limit == 0 || i < s.Limit {
			s.Holders = append(s.Holders, n)
		}
	}
	s.Waiting, err = readDir(ctx, conn, p+"/"+LocksChild, KindLock)
	return err
}

// split puts ns[i] among the holders when held(i), called in order, or
// else among the waiters.
func (s *State) split(ns []Node, held func(i int) bool) {
	for i, n := range ns {
		if held(i) {
			s.Holders = append(s.Holders, n)
		} else {
			s.Waiting = append(s.Waiting, n)
		}
	}
}

// readDir lists dir's contenders of the accept kinds and reads them; a
// missing dir has none.
func readDir(ctx context.Context, conn Conn, dir string, accept ...string) ([]Node, error) {
	names, err := conn.Children(ctx, dir)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return readNodes(ctx, conn, dir, Sort(names, accept...))
}

// readNodes reads the nodes cs of dir, in order; a node gone since the
// listing is left out.
func readNodes(ctx context.Context, conn Conn, dir string, cs []Contender) ([]Node, error) {
	out := make([]Node, 0, len(cs))
	for _, c := range cs {
		p := dir + "/" + c.Name
		data, st, err := conn.Get(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, Node{Path: p, Entry: Entry{Contender: c, Data: UserData(data), Stat: *st}})
	}
	return out, nil
}
