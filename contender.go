package zklock

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/queue"
)

// Contender describes one node in a lock's queue, as returned by the
// Contenders methods: the holder (or holders) first, then the waiters in the
// order they will be granted.
type Contender struct {
	Path    string    // full node path
	Kind    string    // "lock-", "__READ__", "__WRIT__", "lease-", ...
	Seq     int32     // sequence number assigned by the server
	Session int64     // owning session id
	Token   int64     // the node's czxid: its fencing token once granted
	Created time.Time // creation time on the server
	Data    []byte    // node data: "host:pid" unless set with WithData
}

func listContenders(ctx context.Context, q *queue.Queue) ([]Contender, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	entries, err := q.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Contender, len(entries))
	for i, e := range entries {
		out[i] = Contender{
			Path:    q.Dir + "/" + e.Name,
			Kind:    e.Kind,
			Seq:     e.Seq,
			Session: e.Stat.EphemeralOwner,
			Token:   e.Stat.Czxid,
			Created: time.UnixMilli(e.Stat.Ctime),
			Data:    e.Data,
		}
	}
	return out, nil
}

// checkCtx rejects a nil or already finished ctx before anything is sent.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	return ctx.Err()
}
