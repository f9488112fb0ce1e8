package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// KindSeqLock is a node of the sequence layout (Seq).
const KindSeqLock = "seqlock-"

// Seq is a mutex in zklock's sequence layout: each contender is an
// ephemeral sequential node named "<inc>-seqlock-<seq>" directly under the
// lock path, where inc is the lock path's czxid in hex (SeqPrefix), with
// no protected prefix, so that the name of the node at any sequence number
// is known and a waiter finds the node ahead of its own by asking whether
// the nodes just below its number exist, not by listing the queue (a
// listing of a thousand Curator names is ~60 KB, which the server builds
// and sends on every enqueue).
//
// # A path's lives
//
// Sequence numbers restart at 0 when the lock path, a CONTAINER, is
// reaped once empty and re-created; its czxid does not repeat. A node's
// name carries the czxid its creator took for the path's: checked against
// the path's own after the create (Seq.create), a node of the wrong one is
// deleted and made again. So the contenders of one life of the path are
// the nodes with its prefix, their names never repeat, and a release
// deletes by name (Seq.Give). Every look at the queue counts only those
// (the walk asks for their names; a listing drops the others, sameLock);
// a reader that knows no czxid takes the newest among the names for the
// path's (CurrentLife).
//
// # Finding the node ahead
//
// A sequence number is the parent's cversion, which every child create
// moves (a delete does not: in ZooKeeper 3.8's PrepRequestProcessor it
// changes the parent's child count and pzxid only), so the node created
// just before ours is one below it; but a queue has gaps all the same:
// the nodes that left it, and other children of the path. After its create a
// contender knows the parent's child count (an exists request pipelined
// behind the create): 1 means it is alone, and holds. Otherwise it lists
// the queue when the count is small (the listing is then as cheap as the
// walk), and else walks down from its number in windows of SeqWindows,
// each one pipeline of exists requests; the nearest node found is the one
// it waits for, and a walk that finds none falls back to a listing. Our
// node's existence is checked in the same pipeline after any wait, so a
// node deleted under us is noticed as a listing would notice it. A
// handle whose last enqueue found a short queue pipelines the listing
// itself behind its create (Conn.CreateAndList), as the default layout
// does, instead of the count: a short queue then costs what it costs
// there.
//
// # Safety
//
// The classic invariant holds: a contender holds only when no contender
// with a lower number exists, and waits for the nearest lower one. The
// server numbers a new node above every existing one and a number is
// never given twice while the lock path lives (a reaped path's numbers
// restart, but its nodes are gone with it, and its czxid changes), so a
// number found missing after our create can never be a contender ahead of
// us: the set ahead of ours only shrinks, and a walk that found the nearest existing node
// proves that none stands between it and us. When that node is deleted
// the walk resumes below it; when its holder announces its release (Give:
// one multi sets its data, then deletes it), it held, so nothing was ahead
// of it, and we hold at once, as Queue.proves argues.
//
// # Sharing a path
//
// Only sequence-layout nodes are found by the walk. Every zklock primitive
// of the other layouts refuses a path on which its first listing shows a
// "seqlock-" node (Foreign), and a sequence-layout contender refuses a
// path on which a listing shows another kind's node ahead of its own. So
// no node D of another layout holds beside a sequence-layout holder. A
// sequence-layout node standing when D was created is in D's first
// listing, which refuses D. Take one created while D stands: each of its
// looks (the first, and each after a deletion) either lists, and refuses
// it with D ahead, or walks to a sequence-layout node Q below it; if Q is
// below D, Q stood through D's create and D was refused; if Q is above D,
// the same holds of Q's looks. Down every such chain, D or the sequence
// node is refused before it can hold, and a refused node's successors
// learn it as a deletion and look again. (A node that holds because it is
// its parent's only child has no D beside it.) Curator's and Kazoo's
// processes make no such check: they must not use a path in this layout
// (Curator orders "seqlock-" nodes by their number and waits for them, but
// a Curator node between two of ours is not seen by the walk).
//
// # A create cut off
//
// With no unique prefix in the name, our node's data ends with a token
// drawn for this create (SeqTag, then the token, before any announcement
// tag), which user data cannot forge (Reserved). After a connection loss
// the queue is listed and the data of its "seqlock-" nodes read: the one
// with our token is adopted if the current session owns it and deleted
// otherwise, as a protected create's would be.
type Seq struct {
	Q *Queue // Kind KindSeqLock, Accept KindSeqLock alone
	// short: the last enqueue found at most SeqListBelow children, so the
	// next one pipelines the listing behind its create, not the count.
	short atomic.Bool
}

// SeqWindows are the walk's windows: how many numbers below the last one
// looked at each pipeline of exists requests asks about. In a long queue
// the node ahead is almost always the one created just before ours, one
// below it (nodes leave from the head); a walk past them all lists.
var SeqWindows = []int{2, 16}

// SeqListBelow: a queue of at most this many children is listed, not
// walked.
const SeqListBelow = 16

// SeqPrefix is what a sequence-layout node's name starts with: the czxid
// of its lock path, in hex, "-", and KindSeqLock; the server appends the
// sequence number.
func SeqPrefix(inc int64) string { return strconv.FormatInt(inc, 16) + "-" + KindSeqLock }

// SeqName returns the name of the sequence-layout node numbered seq under
// prefix (SeqPrefix), as the server formats it (%010d of a signed 32-bit
// counter).
func SeqName(prefix string, seq int32) string { return fmt.Sprintf("%s%010d", prefix, seq) }

// seqCzxid returns the czxid a sequence-layout node's name carries.
func seqCzxid(name string) (int64, bool) {
	i := strings.LastIndex(name, "-"+KindSeqLock)
	if i < 0 {
		return 0, false
	}
	z, err := strconv.ParseInt(name[:i], 16, 64)
	return z, err == nil
}

// seqPrefixOf returns the SeqPrefix a sequence-layout node's name starts
// with.
func seqPrefixOf(name string) string {
	return name[:strings.LastIndex(name, KindSeqLock)+len(KindSeqLock)]
}

// CurrentLife returns names, a lock path's children, without the
// sequence-layout nodes of its earlier lives: those whose prefix is not
// the newest czxid among them (a path's czxids only grow; a contender
// checks its node's against the path's, sameLock). For a reader that does
// not know the path's czxid (Holders, ReadState): with only a non-
// contender's node of an earlier life left, for the round trip it lives,
// it is taken for the path's.
func CurrentLife(names []string) []string {
	newest, prefix := int64(-1), ""
	for _, n := range names {
		if c, ok := Parse(n); !ok || c.Kind != KindSeqLock {
			continue
		}
		if z, ok := seqCzxid(n); ok && z > newest {
			newest, prefix = z, seqPrefixOf(n)
		}
	}
	if prefix == "" {
		return names
	}
	return sameLock(names, prefix)
}

// sameLock returns names without the sequence-layout nodes whose prefix
// is not prefix: nodes named after a lock path's earlier life (a contender
// that took the path's old czxid for its create, and deletes its node
// once it learns the path's), never contenders. A release of ours whose
// node was deleted (a Break) and whose path was reaped may set the data of
// such a node and delete it (Give): a waiter that took it for the node
// ahead would take that for a release.
func sameLock(names []string, prefix string) []string {
	var out []string
	for i, n := range names {
		if strings.HasPrefix(n, prefix) {
			if out != nil {
				out = append(out, n)
			}
			continue
		}
		if c, ok := Parse(n); !ok || c.Kind != KindSeqLock {
			if out != nil {
				out = append(out, n)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(names)-1), names[:i]...)
		}
	}
	if out == nil {
		return names
	}
	return out
}

// Acquire is Queue.Acquire in the sequence layout.
func (s *Seq) Acquire(ctx context.Context, r Request) (*Held, error) {
	for {
		n, count, err := s.create(ctx, r.Data)
		if err != nil {
			return nil, err
		}
		if count >= 0 {
			s.short.Store(count <= SeqListBelow)
		}
		h, err := s.wait(ctx, n, count, r)
		if err == nil {
			return h, nil
		}
		s.Q.Conn.Discard(n.path, n.owner)
		if !errors.Is(err, errGone) {
			return nil, err
		}
	}
}

// wait finds the node ahead of ours and waits for it, until none is.
func (s *Seq) wait(ctx context.Context, n node, count int32, r Request) (*Held, error) {
	q := s.Q
	ours, ok := Parse(n.name)
	if !ok || ours.Kind != KindSeqLock {
		return nil, fmt.Errorf("queue: %s is not a sequence-layout node", n.path)
	}
	if count == 1 { // ours is the parent's only child
		return q.grant(ctx, n)
	}
	prefix := seqPrefixOf(n.name)
	below, list := ours.Seq, r.Try || n.listing != nil || (count > 1 && count <= SeqListBelow)
	for waited := false; ; waited = true {
		var ahead Contender
		found, alone := false, false
		if !list {
			var err error
			if ahead, found, err = s.walk(ctx, n, prefix, below, waited); err != nil {
				return nil, err
			}
		}
		if !found {
			sc, err := s.look(ctx, n, ours, prefix, n.listing)
			n.listing = nil // only the first look may use it
			if err != nil {
				return nil, err
			}
			if !sc.Blocked {
				return s.granted(ctx, n, ours, waited)
			}
			if r.Try {
				return nil, q.locked(ctx, sc, r.Blocks)
			}
			ahead, alone = sc.Blocker, sc.Blockers == 1
		}
		ch, err := q.Conn.WaitChange(ctx, q.Dir+"/"+ahead.Name)
		if err != nil {
			return nil, err
		}
		switch {
		case ch == Released && q.Handoff, ch == Deleted && alone:
			return s.granted(ctx, n, ours, true)
		case ch == Deleted:
			below, list = ahead.Seq, false // the numbers above it were missing already
		default:
			below, list = ahead.Seq+1, false // it may still stand: from it again
		}
	}
}

func (s *Seq) granted(ctx context.Context, n node, ours Contender, waited bool) (*Held, error) {
	h, err := s.Q.grant(ctx, n)
	if h != nil {
		h.Waited = waited
	}
	return h, err
}

// walk looks for the nearest sequence-layout node below the number below,
// window by window; found is false when every window was empty. With
// checkOurs, our own node's existence is asked in the first pipeline, and
// errGone returned when it is gone.
func (s *Seq) walk(ctx context.Context, n node, prefix string, below int32, checkOurs bool) (Contender, bool, error) {
	for _, w := range SeqWindows {
		paths := make([]string, 0, w+1)
		if checkOurs {
			paths = append(paths, n.path)
		}
		for i := 1; i <= w; i++ {
			paths = append(paths, s.Q.Dir+"/"+SeqName(prefix, below-int32(i)))
		}
		ex, err := s.Q.Conn.Exist(ctx, paths)
		if err != nil {
			return Contender{}, false, err
		}
		if checkOurs {
			if !ex[0] {
				return Contender{}, false, errGone
			}
			ex, checkOurs = ex[1:], false
		}
		if i := slices.Index(ex, true); i >= 0 {
			seq := below - int32(i+1)
			return Contender{Name: SeqName(prefix, seq), Kind: KindSeqLock, Seq: seq}, true, nil
		}
		below -= int32(w)
	}
	return Contender{}, false, nil
}

// look lists the queue (unless names is the listing taken with our
// create): what Queue.wait reads from a listing of the nodes named with
// prefix (sameLock), after refusing a path where another kind's node is
// ahead of ours.
func (s *Seq) look(ctx context.Context, n node, ours Contender, prefix string, names []string) (Scanned, error) {
	q := s.Q
	if names == nil {
		var err error
		names, err = q.Conn.Children(ctx, q.Dir)
		if errors.Is(err, client.ErrNoNode) {
			return Scanned{}, errGone // reaped: our node went with its session
		}
		if err != nil {
			return Scanned{}, err
		}
	}
	if c, ok := foreignAhead(names, ours, q.Accept); ok {
		return Scanned{}, WrongKind(q.Dir, c)
	}
	sc, ok := Scan(sameLock(names, prefix), n.name, nil, q.Accept...)
	if !ok {
		return Scanned{}, errGone
	}
	return sc, nil
}

// foreignAhead returns a node among names of a kind not in accept that is
// ahead of ours, or a semaphore's child (which has no number).
func foreignAhead(names []string, ours Contender, accept []string) (Contender, bool) {
	if c, ok := Foreign(names, []string{KindLock, KindRead, KindWrite, KindLease, KindLatch, KindPermit,
		KindKazooLock, KindKazooRLock, KindSeqLock}); ok {
		return c, true // LocksChild or LeasesChild: every kind is accepted but those
	}
	cs, o := parseAll(names, kinds)
	for _, c := range cs {
		if !slices.Contains(accept, c.Kind) && o.cmp(c, ours) < 0 {
			return c, true
		}
	}
	return Contender{}, false
}

// Take is Acquire for the hold engine.
func (s *Seq) Take(ctx context.Context, r Request) (*Place, error) {
	h, err := s.Acquire(ctx, r)
	if err != nil {
		return nil, err
	}
	return &Place{Held: []*Held{h}}, nil
}

// Give releases the place's node, always announced (Queue.Release
// announces only the release of a holder that waited, which is all a
// listing waiter needs): a waiter that walked does not know whether it was
// the only contender ahead, and without the announcement it would walk
// again below a holder's number, where nothing is.
//
// It deletes by name, without reading the node first: the name is the
// holder's alone. A sequence number is given once in a lock path's life,
// and a path reaped and re-created (once every node is gone, a Break's
// deletion of ours among them, of which the holder is not told) has a new
// czxid, which the names of its contenders carry (SeqPrefix), so no
// contender's node is ever named like ours again. The one node that may
// be is a non-contender's: a create made under the old czxid by a
// contender that learnt it before the reap, which deletes its node as
// soon as its reply tells it the path's (Seq.create), standing until then
// (up to that contender's session timeout, if it is cut off); a release
// that deletes it instead returns nil, and no waiter takes its
// announcement for a release (sameLock). A node missing at the first
// attempt is a hold lost: errs.ErrLockLost, our tracking dropped so that
// the epoch's end deletes nothing either; missing at a retry after a lost
// reply, the first attempt may have deleted it: nil.
func (s *Seq) Give(ctx context.Context, p *Place) error {
	h := p.Held[0]
	q := s.Q
	select {
	case <-h.Epoch.Done:
		return errs.ErrLockLost
	default:
	}
	err := q.Conn.ReleaseOwnUntil(ctx, h.Path, h.Epoch)
	switch {
	case err == nil:
		q.Conn.Untrack(h.Epoch, &h.Tracked)
		return nil
	case errors.Is(err, client.ErrNoNode):
		q.Conn.Untrack(h.Epoch, &h.Tracked)
		return errs.ErrLockLost
	}
	select {
	case <-h.Epoch.Done:
		return errs.ErrLockLost
	default:
		return err
	}
}
