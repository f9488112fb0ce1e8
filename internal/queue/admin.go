package queue

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// What an operator does to a lock path from outside its queue: find its
// holders, ask them to release (Revoke), delete their nodes (Break).

// Holders returns the nodes holding the lock at p: the first contender
// (with, if it is a writer that downgraded, the read node beside it: the
// same holder's, at its sequence number), or every reader ahead of the
// first writer.
func Holders(ctx context.Context, conn Conn, p string) ([]string, error) {
	names, err := conn.Children(ctx, p)
	if errors.Is(err, client.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s does not exist", errs.ErrNotLocked, p)
	}
	if err != nil {
		return nil, err
	}
	out := HoldersOf(p, names)
	if len(out) == 0 && semaphore(names) {
		// ls lists its leases held: "no holder" would read as a lie.
		return nil, fmt.Errorf("%w: %s is a semaphore, whose leases are neither revoked nor broken "+
			"(Contenders lists them)", errs.ErrNotLocked, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no holder under %s", errs.ErrNotLocked, p)
	}
	return out, nil
}

// semaphore reports whether names, the children of a path, are a
// semaphore's: Curator's "locks" and "leases", lease nodes, or the permit
// layout's nodes.
func semaphore(names []string) bool {
	for _, n := range names {
		if c, ok := Parse(n); n == LocksChild || n == LeasesChild || ok && (c.Kind == KindLease || c.Kind == KindPermit) {
			return true
		}
	}
	return false
}

// HoldersOf returns the holders' nodes among names, the children of lock
// path p, as Holders finds them.
func HoldersOf(p string, names []string) []string {
	cs := Sort(CurrentLife(names), KindLock, KindKazooLock, KindRead, KindWrite, KindSeqLock)
	var out []string
	for i, c := range cs {
		if c.Kind != KindRead {
			if i == 0 {
				out = append(out, p+"/"+c.Name)
				out = append(out, beside(p, cs[1:], c)...)
			}
			break
		}
		out = append(out, p+"/"+c.Name)
	}
	return out
}

// beside returns the read nodes among cs (sorted) at w's sequence number:
// a writer's downgrade (Queue.Join), which Sort puts right after it.
func beside(p string, cs []Contender, w Contender) []string {
	var out []string
	for _, c := range cs {
		if w.Kind != KindWrite || c.Kind != KindRead || c.Seq != w.Seq {
			break
		}
		out = append(out, p+"/"+c.Name)
	}
	return out
}

// Revoke writes RevokeMessage into each node of nodes (a contender's node,
// or the holders of a lock path: see Holders) and returns the nodes
// written. It refuses, with errs.ErrNotRevocable and writing nothing, a node
// whose release is announced (the waiter behind would take the write for
// a release) and a semaphore's lease (no semaphore is revocable).
func Revoke(ctx context.Context, conn Conn, p string) ([]string, error) {
	nodes := []string{p}
	if _, ok := Parse(path.Base(p)); !ok {
		var err error
		if nodes, err = Holders(ctx, conn, p); err != nil {
			return nil, err
		}
	}
	for _, n := range nodes {
		data, _, err := conn.Get(ctx, n)
		if err != nil {
			return nil, err
		}
		if c, _ := Parse(path.Base(n)); Announces(data) || c.Kind == KindLease {
			return nil, fmt.Errorf("%w: %s", errs.ErrNotRevocable, n)
		}
	}
	for _, n := range nodes {
		if err := conn.SetData(ctx, n, []byte(RevokeMessage), -1); err != nil && !errors.Is(err, client.ErrNoNode) {
			return nil, err
		}
	}
	return nodes, nil
}

// Break returns the holders of lock path p with their data and stat and,
// with force, deletes their nodes. Without force it deletes nothing and
// returns the first holder with errs.ErrHolderAlive. It returns errs.ErrNotLocked
// when nobody holds.
func Break(ctx context.Context, conn Conn, p string, force bool) ([]Entry, error) {
	nodes, err := Holders(ctx, conn, p)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, n := range nodes {
		data, st, err := conn.Get(ctx, n)
		if errors.Is(err, client.ErrNoNode) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, err
		}
		c, _ := Parse(path.Base(n))
		e := Entry{Contender: c, Data: UserData(data), Stat: *st}
		if !force {
			return []Entry{e}, errs.ErrHolderAlive
		}
		out = append(out, e)
	}
	for _, e := range out {
		if err := conn.Delete(ctx, p+"/"+e.Name); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, errs.ErrNotLocked
	}
	return out, nil
}
