package zklock

import (
	"context"
	"fmt"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// CohortWaiters reports how many handles wait in the cohort of s on path,
// for tests that must act while a local waiter is queued.
func CohortWaiters(s *Session, path string) int { return s.cohorts.Waiters(path) }

// AssumeWatchModes lets s track a semaphore's path on this repository's
// ZooKeeper 3.8 servers (see session.Conn.AssumeWatchModes), for the tests
// of tracking that set no other watch of s on the path.
func AssumeWatchModes(s *Session) { s.c.AssumeWatchModes() }

// HoldCount is how many times r's owner has locked without unlocking, for
// the tests of re-entry (the count is not public: Lock and Unlock match).
func HoldCount(r *ReentrantMutex) int { return r.holdCount() }

// LeaderOf reads e's leader as Election's doc says: the first of
// Contenders (the zero Contender when nobody campaigns).
func LeaderOf(ctx context.Context, e *Election) (Contender, error) {
	cs, err := Contenders(ctx, e.s, e.q.Dir)
	if err != nil || len(cs) == 0 {
		return Contender{}, err
	}
	return cs[0], nil
}

// RevokedOf is the revocation signal of h's current hold (h a *Mutex,
// *ReentrantMutex or *RWMutex): closed at the first request WithRevocable's
// listener hears, nil when nothing revocable is held.
func RevokedOf(h any) <-chan struct{} {
	switch v := h.(type) {
	case *Mutex:
		return v.h.Current().Revoked()
	case *ReentrantMutex:
		return v.h.Current().Revoked()
	case *RWMutex:
		return v.current().Revoked()
	}
	panic(fmt.Sprintf("RevokedOf(%T)", h))
}

// LeaseNodes returns the nodes of l not yet released.
func LeaseNodes(l *Lease) []string {
	if l.h.Released() {
		return nil
	}
	return l.h.Nodes()
}

// ContendersOf lists h's path as its old Contenders method did, through
// Contenders: every contender of a Mutex, ReentrantMutex, RWMutex or
// Election, holders first, and a Semaphore's waiters (HoldersOf has its
// holders).
func ContendersOf(ctx context.Context, h any) ([]Contender, error) {
	cs, err := contendersOf(ctx, h)
	if _, ok := h.(*Semaphore); ok {
		cs = holding(cs, false)
	}
	return cs, err
}

// HoldersOf lists the holders of h's path (a Semaphore's leases within
// its limit).
func HoldersOf(ctx context.Context, h any) ([]Contender, error) {
	cs, err := contendersOf(ctx, h)
	return holding(cs, true), err
}

func contendersOf(ctx context.Context, h any) ([]Contender, error) {
	var q *queue.Queue
	switch h := h.(type) {
	case *Mutex:
		q = &h.q
	case *ReentrantMutex:
		q = h.q
	case *RWMutex:
		q = h.q
	case *Election:
		q = h.q
	case *Semaphore:
		return contendersAt(ctx, h.q.Conn, h.path)
	default:
		panic(fmt.Sprintf("ContendersOf(%T)", h))
	}
	return contendersAt(ctx, q.Conn, q.Dir)
}

func holding(cs []Contender, holds bool) []Contender {
	var out []Contender
	for _, c := range cs {
		if c.Holds == holds {
			out = append(out, c)
		}
	}
	return out
}

// Ownership is the channel that closes when s's current ownership epoch
// ends (each hold's Lost is the public form).
func Ownership(s *Session) <-chan struct{} { return s.c.Ownership() }

// RevokeMessage is what a revocation request writes into a lock node.
const RevokeMessage = revokeMessage

// NodeOf is h's node as the handle knows it (what the removed Node methods
// returned), or "" when nothing is held. Unlike h.Guard().Path it has no
// effect: a cohort's Guard marks its hold as guarded, so that its next
// local handoff bumps the node's version; a test that only wants to know
// the node must not take that other path.
func NodeOf(h any) string {
	switch h := h.(type) {
	case *Mutex:
		return h.h.Current().Node()
	case *ReentrantMutex:
		return h.h.Current().Node()
	case *RWMutex:
		return h.current().Node()
	case *Lease:
		g := h.Guard()
		if c, ok := g[len(g)-1].(*zk.CheckOp); ok && c != nil {
			return c.Path // the node behind Token
		}
		return "" // released: one nil check
	case *Term:
		return h.node
	}
	panic(fmt.Sprintf("NodeOf(%T)", h))
}
