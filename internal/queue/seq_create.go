package queue

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/zklock/zklock/internal/client"
)

// SeqTag is followed, in a sequence-layout node's data, by the token of
// the create that made it (see Seq, "A create cut off").
const SeqTag = TagPrefix + "s"

// seqTokenLen is a token's length: 16 hex digits, 64 random bits.
const seqTokenLen = 16

func newSeqToken() string {
	var b [seqTokenLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// seqToken returns the token data ends with (after any announcement tag);
// ok is false when it ends with none.
func seqToken(data []byte) (string, bool) {
	data = bytes.TrimSuffix(data, []byte(Announcer))
	n := len(data) - seqTokenLen - len(SeqTag)
	if n < 0 || !bytes.Equal(data[n:n+len(SeqTag)], []byte(SeqTag)) {
		return "", false
	}
	tok := data[n+len(SeqTag):]
	if _, err := hex.DecodeString(string(tok)); err != nil {
		return "", false
	}
	return string(tok), true
}

// stripSeqToken returns data without the token it ends with, if any.
func stripSeqToken(data []byte) []byte {
	if _, ok := seqToken(data); ok && !bytes.HasSuffix(data, []byte(Announcer)) {
		return data[:len(data)-seqTokenLen-len(SeqTag)]
	}
	return data
}

// create makes our node, with its parents when they are missing, and
// learns the parent's child count with it (Conn.CreateAndStat; -1 when
// unknown), or, while the queue was short, its listing (Conn.CreateAndList,
// in the node). A create cut off by connection loss is resolved by its
// token: adopted if the current session owns the node, deleted otherwise.
//
// Our node's name carries the lock path's czxid as the session knows it
// (Conn.KnownCzxid, shared by its handles; read first when it knows
// none). The parent's czxid comes back with the
// create (or is read after it, when it did not): a node whose name does
// not carry it was made in a later life of the path than we knew of (the
// path reaped and re-created since), and is no contender: it is deleted,
// and the create made again under the czxid learnt. A node that still
// exists when its parent's czxid is read lives under that parent, so a
// node kept is one of the path's current life (or gone, which the wait
// finds out).
func (s *Seq) create(ctx context.Context, data []byte) (node, int32, error) {
	q := s.Q
	user := data
	parents := append(Parents(q.Dir), q.Dir)
	var err error
	for i := 0; i < maxCreates; i++ {
		var inc int64
		if inc, err = q.Conn.KnownCzxid(ctx, parents); err != nil {
			return node{}, -1, err
		}
		// A token for each turn: a turn cut off adopts its own node only,
		// never one an earlier turn discarded, whose delete may be
		// pending.
		token := newSeqToken()
		data := q.nodeData(append(append(make([]byte, 0, len(user)+len(SeqTag)+seqTokenLen), user...), SeqTag+token...))
		path := q.Dir + "/" + SeqPrefix(inc)
		var n node
		var czxid, owner, parent int64
		count := int32(-1)
		var names []string
		if !s.short.Load() {
			n.path, czxid, owner, count, parent, err = q.Conn.CreateAndStat(ctx, parents, path, data)
		} else if n.path, czxid, owner, names, parent, err = q.Conn.CreateAndList(ctx, parents, path, data); names != nil {
			count = int32(len(names))
		}
		switch {
		case err == nil:
			n = node{path: n.path, name: n.path[len(q.Dir)+1:], czxid: czxid, owner: owner, listing: names}
		case errors.Is(err, client.ErrNoNode):
			// A parent the Conn took for existing was reaped: the next turn
			// creates them, pipelined ahead of the create.
			continue
		case errors.Is(err, client.ErrConnectionLoss) || errors.Is(err, client.ErrSessionMoved):
			rn, ok, err := s.recover(ctx, token, true)
			if err != nil {
				q.Conn.Go(func(bg context.Context) { _, _, _ = s.recover(bg, token, false) })
				return node{}, -1, err
			}
			if !ok {
				continue
			}
			n, count, parent = rn, -1, 0
		case errors.Is(err, client.ErrSessionExpired):
			if _, err := q.Conn.Epoch(ctx); err != nil {
				return node{}, -1, err
			}
			continue
		default:
			return node{}, -1, err
		}
		ok, err := s.current(ctx, n.name, parent)
		if err != nil {
			q.Conn.Discard(n.path, n.owner)
			return node{}, -1, err
		}
		if ok {
			return n, count, nil
		}
		q.Conn.Discard(n.path, n.owner)
	}
	return node{}, -1, fmt.Errorf("queue: create under %s: gave up after %d attempts: %w", q.Dir, maxCreates, err)
}

// current reports whether our node just made, named name, belongs to the
// lock path's current life: whether the czxid its name carries (the one
// it was created under, a cut-off create's adopted node's included) is
// the path's. parent is the path's czxid as the create's pipeline read it
// (which the Conn remembers), 0 when it did not, and it is read now (0
// again when the path is gone: our node went with it).
func (s *Seq) current(ctx context.Context, name string, parent int64) (bool, error) {
	if parent == 0 {
		var err error
		if parent, err = s.Q.Conn.ReadCzxid(ctx, s.Q.Dir); err != nil {
			return false, err
		}
	}
	inc, ok := seqCzxid(name)
	return ok && parent != 0 && parent == inc, nil
}

// recover finds the node a cut-off create with token may have made: it
// reads every sequence-layout node's data (a rare path: a create cut off).
// Without adopt, or when the node is not of the current session, it
// discards the node.
func (s *Seq) recover(ctx context.Context, token string, adopt bool) (node, bool, error) {
	q := s.Q
	return q.recoverBy(ctx, adopt, func(ctx context.Context, p, name string) (*client.Stat, error) {
		if c, ok := Parse(name); !ok || c.Kind != KindSeqLock {
			return nil, nil
		}
		data, st, err := q.Conn.Get(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			return nil, nil
		}
		if t, tagged := seqToken(data); err != nil || !tagged || t != token {
			return nil, err
		}
		return st, nil
	})
}
