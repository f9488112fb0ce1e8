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

// LeaseNodes returns the nodes of l not yet released.
func LeaseNodes(l *Lease) []string {
	if l.h.Released() {
		return nil
	}
	return l.h.Nodes()
}

// nodeOf is the path of a guard's node, or "" for a nil guard.
func nodeOf(g *zk.CheckOp) string {
	if g == nil {
		return ""
	}
	return g.Path
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
