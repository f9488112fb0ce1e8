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
