package queue

import (
	"context"
	"errors"

	"github.com/zklock/zklock/internal/client"
)

// Entry is a contender with its node's data and stat.
type Entry struct {
	Contender
	Data []byte
	Stat client.Stat
}

// List returns the contenders of the queue in order, each with its data. A
// node that vanishes between the listing and its read is left out. A missing
// lock path is an empty queue.
func (q *Queue) List(ctx context.Context) ([]Entry, error) {
	names, err := q.Conn.Children(ctx, q.Dir)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, c := range Sort(names, q.Accept...) {
		data, st, err := q.Conn.Get(ctx, q.Dir+"/"+c.Name)
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Contender: c, Data: UserData(data), Stat: *st})
	}
	return out, nil
}

// First returns the first contender of the queue with its data and stat;
// ok is false when there is none (or no lock path). A node that vanishes
// between the listing and its read is passed over: the next one is first.
func (q *Queue) First(ctx context.Context) (e Entry, ok bool, err error) {
	names, err := q.Conn.Children(ctx, q.Dir)
	if errors.Is(err, client.ErrNoNode) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	for _, c := range Sort(names, q.Accept...) {
		data, st, err := q.Conn.Get(ctx, q.Dir+"/"+c.Name)
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return Entry{}, false, err
		}
		return Entry{Contender: c, Data: data, Stat: *st}, true, nil
	}
	return Entry{}, false, nil
}

// AwaitFirstChange waits until first (a node's name, "" for an empty
// queue) may no longer be the queue's first: its node changed or went, or,
// with none, a contender arrived; or until a session change or ctx's end.
// It watches the first node only (or the children of an empty queue), so
// an observer costs the contenders nothing. A data watch also fires on a
// new value: only deletion can change who is first, a new contender always
// queuing behind it.
func (q *Queue) AwaitFirstChange(ctx context.Context, first string) error {
	if first != "" {
		_, err := q.Conn.WaitChange(ctx, q.Dir+"/"+first)
		return err
	}
	names, _, ch, err := q.Conn.ChildrenW(ctx, q.Dir)
	if errors.Is(err, client.ErrNoNode) {
		return q.Conn.WaitExists(ctx, q.Dir)
	}
	if err != nil {
		return err
	}
	if len(Sort(names, q.Accept...)) > 0 {
		return nil // a contender arrived since we looked
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
