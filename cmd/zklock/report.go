package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
)

// entry is one node of a lock's queue, as status shows it.
type entry struct {
	Role    string    `json:"role"`           // "holder" or "waiting"
	Mode    string    `json:"mode,omitempty"` // "read" or "write" for a reader/writer lock
	Node    string    `json:"node"`           // full path
	Session string    `json:"session"`        // hex, as ZooKeeper prints it
	Token   int64     `json:"token"`          // the fencing token (Mutex.Token: czxid << 12)
	Created time.Time `json:"created"`        // by the server's clock
	AgeMS   int64     `json:"age_ms"`
	Data    string    `json:"data"`
	// Revoke: a revocation request was written into the node (zklock
	// revoke, Curator's Revoker); its data is the request.
	Revoke bool `json:"revocation_requested,omitempty"`
}

// report is the state of one path: the holders, then the waiters in the
// order they will be served.
type report struct {
	Path    string  `json:"path"`
	Kind    string  `json:"kind"`            // lock, rw or semaphore; "" when nobody is there
	Limit   int     `json:"limit,omitempty"` // of a semaphore
	Holders []entry `json:"holders"`
	Waiting []entry `json:"waiting"`
}

// list reads the state of path; kind "" detects it.
func list(ctx context.Context, s *zklock.Session, path, kind string) (report, error) {
	if err := checkPath(s, path); err != nil {
		return report{}, err
	}
	detect := kind == ""
	if detect {
		var err error
		if kind, err = detectKind(ctx, s, path); err != nil {
			return report{}, err
		}
	}
	r := report{Path: path, Kind: kind, Holders: []entry{}, Waiting: []entry{}}
	var err error
	switch kind {
	case kindLock:
		err = r.fillLock(ctx, s)
	case kindRW:
		err = r.fillRW(ctx, s)
	case kindSemaphore:
		err = r.fillSemaphore(ctx, s)
	case kindSemQueue:
		err = r.fillSemQueue(ctx, s)
	}
	// A kind told only by its contenders' nodes, all gone between the
	// detection's listing and the report's: the path is as free as one with
	// nothing there, and says so the same way (status --watch would
	// otherwise print the same free state twice).
	if detect && kind != kindSemaphore && len(r.Holders)+len(r.Waiting) == 0 {
		r.Kind = ""
	}
	return r, err
}

// fillLock: the first node of a Mutex's queue holds it (or is about to
// learn that it does).
func (r *report) fillLock(ctx context.Context, s *zklock.Session) error {
	m, err := zklock.NewMutex(s, r.Path)
	if err != nil {
		return err
	}
	cs, err := m.Contenders(ctx)
	for i, c := range cs {
		r.add(i == 0, "", c)
	}
	return err
}

// fillRW: a writer holds when it is first; a reader holds when no writer is
// ahead of it, except its own write lock that it downgraded from (a read
// node joined beside the first writer, with its sequence number).
func (r *report) fillRW(ctx context.Context, s *zklock.Session) error {
	m, err := zklock.NewRWMutex(s, r.Path)
	if err != nil {
		return err
	}
	cs, err := m.Contenders(ctx)
	for i, held := range rwHeld(cs) {
		r.add(held, rwMode(cs[i]), cs[i])
	}
	return err
}

// rwHeld tells which of a reader/writer queue's contenders, in queue order,
// hold: a writer when it is first; a reader when no writer is ahead of it,
// except its own write lock that it downgraded from (a read node joined
// beside the first writer, with its sequence number). Kazoo's locks follow
// the same rule, its "__lock__" nodes being the writers.
func rwHeld(cs []zklock.Contender) []bool {
	held := make([]bool, len(cs))
	writerAhead := false
	for i, c := range cs {
		write := isWriter(c)
		held[i] = (write && i == 0) || (!write && (!writerAhead || cs[0].Seq == c.Seq))
		writerAhead = writerAhead || write
	}
	return held
}

// isWriter: in a read-write queue a Kazoo lock node (KindMutex) is a
// writer, as Kazoo's WriteLock's.
func isWriter(c zklock.Contender) bool {
	return c.Kind == zklock.KindRWMutexWrite || c.Kind == zklock.KindMutex
}

func rwMode(c zklock.Contender) string {
	if isWriter(c) {
		return "write"
	}
	return "read"
}

// fillSemQueue: the permit nodes carry the limit; those whose leases fit
// within it, in queue order, hold.
func (r *report) fillSemQueue(ctx context.Context, s *zklock.Session) error {
	names, _, err := s.Client().Children(ctx, r.Path)
	if err != nil {
		return err
	}
	for _, c := range queue.Sort(names, queue.KindPermit) {
		if _, limit, ok := queue.PermitWeight(c.Name); ok {
			r.Limit = limit
			break
		}
	}
	sem, err := zklock.NewSemaphore(s, r.Path, max(r.Limit, 1), zklock.WithPermitLayout())
	if err != nil {
		return err
	}
	hs, err := sem.Holders(ctx)
	if err != nil {
		return err
	}
	for _, c := range hs {
		r.add(true, "", c)
	}
	ws, err := sem.Contenders(ctx)
	for _, c := range ws {
		r.add(false, "", c)
	}
	return err
}

// fillSemaphore: lease nodes beyond the limit belong to the client at the
// head of the queue, which is listed among the waiters; so only the first
// limit lease nodes are holders.
func (r *report) fillSemaphore(ctx context.Context, s *zklock.Session) error {
	if data, _, err := s.Client().Get(ctx, r.Path); err == nil {
		r.Limit, _ = strconv.Atoi(string(data))
	}
	sem, err := zklock.NewSemaphore(s, r.Path, max(r.Limit, 1))
	if err != nil {
		return err
	}
	hs, err := sem.Holders(ctx)
	if err != nil {
		return err
	}
	for i, c := range hs {
		if r.Limit == 0 || i < r.Limit {
			r.add(true, "", c)
		}
	}
	ws, err := sem.Contenders(ctx)
	for _, c := range ws {
		r.add(false, "", c)
	}
	return err
}

func (r *report) add(held bool, mode string, c zklock.Contender) {
	e := newEntry(held, mode, c)
	if held {
		r.Holders = append(r.Holders, e)
		return
	}
	r.Waiting = append(r.Waiting, e)
}

func newEntry(held bool, mode string, c zklock.Contender) entry {
	e := entry{Role: "waiting", Mode: mode, Node: c.Path, Session: fmt.Sprintf("0x%x", c.Session),
		Token: c.Token, Created: c.Created, AgeMS: time.Since(c.Created).Milliseconds(), Data: string(c.Data),
		Revoke: string(c.Data) == zklock.RevokeMessage}
	if held {
		e.Role = "holder"
	}
	return e
}

// dataCell is what status shows of an entry's data: a revocation request
// is named as one.
func dataCell(e entry) string {
	if e.Revoke {
		return "revocation requested"
	}
	return printable(e.Data, 40)
}
