package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// Election is leader election over ZooKeeper: among all candidates
// campaigning on the same path, across processes and machines, at most one
// leads at a time, and a leader is told when it may have stopped leading.
//
// An Election is one candidate. Candidates are elected in the order they
// began campaigning; each waits on the candidate directly ahead of it only,
// so a resignation wakes exactly one. The leader is the first candidate in
// the queue (it leads, or is about to learn that it does): the first of
// Contenders(ctx, s, path), whose Data is its value; none when nobody
// campaigns. Observe streams it, change by change.
//
// A candidate is a Curator InterProcessMutex contender holding its value
// (docs/interop.md): zklock and Curator LeaderSelector candidates on one
// path elect one leader among them, and a Mutex on the path joins the
// queue. Campaign refuses a path holding an RWMutex's, a Semaphore's or a
// Curator LeaderLatch's nodes with ErrWrongKind.
//
// Leadership is claimed only after checking that our node still exists and
// belongs to the current session. Leading is not guaranteed once the Term's
// Lost is closed: the session may have expired and another candidate may
// lead. Stop acting as leader then, and fence writes with Term.Token or
// Term.Guard.
//
// Methods are safe for concurrent use. An Election campaigns once at a
// time: while a Campaign waits, a term is current or Run runs, another
// Campaign or Run on it returns ErrAlreadyLocked at once and queues
// nothing. An Election must not be copied, nor used unless NewElection
// made it (else ErrInvalidArgument).
type Election struct {
	s    *Session
	q    *queue.Queue
	line *hold.Line
	data []byte

	mu          sync.Mutex
	campaigning bool // a Campaign is between begin and its return
	running     bool // a Run is in progress: only its own Campaigns may begin
	held        *hold.Hold
	term        *Term
}

// electionSpec: a candidate's data is its value exactly (Curator's
// LeaderSelector reads it as the participant id), so it carries no
// announcement, and a term's end is a plain deletion (its successor lists,
// or holds at once when it was the only one ahead).
var electionSpec = spec{kind: KindElection, node: queue.KindLock, accept: lockKinds, quiet: true, errs: electionErrs}

// electionErrs are what a Resign returns.
var electionErrs = &hold.Errs{Lost: errs.ErrLeadershipLost, NotHeld: ErrNotLocked}

// NewElection returns an Election on path. Nothing is sent to the server
// until Campaign, Run or Observe. The path rules, request size included,
// are NewMutex's. WithData sets the value Campaign uses when given a nil
// value.
func NewElection(s *Session, path string, opts ...Option) (*Election, error) {
	q, o, err := build(s, path, electionSpec, opts)
	if err != nil {
		return nil, err
	}
	l, _ := s.line(q, q, electionSpec, o)
	return &Election{s: s, q: q, line: l, data: o.data}, nil
}

// Campaign blocks until this candidate leads, ctx ends, or the session is
// closed, and returns the Term it leads for. The candidate's node holds
// value (nil means the Election's WithData value, "host:pid" by default);
// Contenders and Observe report it to everyone. If the session expires while
// Campaign waits, it campaigns again under the new session.
//
// On error nothing is left on the server: the error names the path and
// satisfies errors.Is(err, ctx.Err()) when ctx ended, and Campaign returns within the
// cleanup grace of ctx's end (see Cleanup in the package doc). Campaign
// returns ErrAlreadyLocked at once, sending nothing, while another
// Campaign on the Election waits, a term is current or Run runs;
// ErrInvalidArgument for a value over zk.MaxDataSize or one that, with the path,
// makes a create request over the session's maximum request size
// (WithMaxRequestSize); ErrInvalidArgument for a value that holds the
// bytes zklock reserves for its tags (see WithData); and a *WrongKindError (wrapping ErrWrongKind), at
// once, when the path holds another kind of primitive's nodes.
func (e *Election) Campaign(ctx context.Context, value []byte) (*Term, error) {
	if e.unmade() {
		return nil, unmade("Election", "NewElection")
	}
	t, err := e.campaign(ctx, value, false)
	return t, named(ctx, "campaign", e.q.Dir, err)
}

// campaign is Campaign; inRun says that Run calls it, which already holds
// the Election's one campaign.
func (e *Election) campaign(ctx context.Context, value []byte, inRun bool) (*Term, error) {
	if err := hold.CheckCtx(ctx); err != nil {
		return nil, err
	}
	if len(value) > zk.MaxDataSize {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errs.ErrDataTooLarge, len(value), zk.MaxDataSize)
	}
	if queue.Reserved(value) {
		return nil, fmt.Errorf("%w: the value holds %q, which zklock reserves for its own tags", ErrInvalidArgument, reservedData)
	}
	if err := e.s.opts.checkCreate(queue.LongestNode(e.q.Dir, e.q.Kind), len(value)); err != nil {
		return nil, err
	}
	if value == nil {
		value = e.data
	}
	if err := e.begin(inRun); err != nil {
		return nil, err
	}
	h, err := e.line.Acquire(ctx, queue.Request{Data: value})
	e.mu.Lock()
	defer e.mu.Unlock()
	e.campaigning = false
	if err != nil {
		return nil, err
	}
	e.held, e.term = h, newTerm(e.q.Conn, h, e.s.closed)
	return e.term, nil
}

// begin marks the Election as campaigning, so that a concurrent Campaign
// is refused rather than queue a second node of this one candidate. A term
// that was lost is forgotten: its node is gone, or is deleted when its
// epoch ends (Session.track), so it needs no more tracking.
func (e *Election) begin(inRun bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busyLocked() || (e.running && !inRun) {
		return errs.ErrAlreadyCampaign
	}
	if e.held != nil {
		e.line.Abandon(e.held) // lost: its node is gone, or goes with its epoch
	}
	e.held, e.term = nil, nil
	e.campaigning = true
	return nil
}

// busyLocked reports that a Campaign waits or a term is current. e.mu must
// be held.
func (e *Election) busyLocked() bool {
	return e.campaigning || (e.term != nil && e.term.Err() == nil)
}

// Resign ends the current term and deletes our node so that the next
// candidate can lead. The term's Lost is closed first, before anything is
// sent, so the caller stops acting as leader before a successor can start.
//
// Resign returns ErrNotLocked when there is no term (Resign cannot cancel a
// Campaign in progress: cancel its ctx), and ErrLockLost when the term
// had already been lost (after Session.Close, the Term's Err, which is
// ErrSessionClosed too). If ctx ends before the delete succeeds, Resign
// returns ctx's error and the delete continues in the background until it
// succeeds or the session is gone. In every case the Election may Campaign
// again.
func (e *Election) Resign(ctx context.Context) error {
	if e.unmade() {
		return unmade("Election", "NewElection")
	}
	return named(ctx, "resign", e.q.Dir, e.resign(ctx))
}

// unmade reports that NewElection did not make e (unmade).
func (e *Election) unmade() bool { return e == nil || e.line == nil }

func (e *Election) resign(ctx context.Context) error {
	if err := hold.CheckCtx(ctx); err != nil {
		return err
	}
	e.mu.Lock()
	h, t := e.held, e.term
	e.held, e.term = nil, nil
	e.mu.Unlock()
	if h == nil {
		return errs.ErrNotLeader
	}
	select {
	case <-h.Epoch().Done: // lost already; the watcher may not have said so yet
		t.end(t.lossErr())
	default:
		t.end(ErrResigned)
	}
	err := e.line.Release(ctx, h)
	switch {
	case errors.Is(err, errs.ErrLeadershipLost) || (err == nil && errors.Is(t.Err(), errs.ErrLeadershipLost)):
		return t.lossErr()
	case err == nil:
		return nil
	}
	e.line.Abandon(h) // the term is over: its node goes in the background
	return err
}

// LeaderInfo describes a leader: the first candidate in the election's
// queue. The zero LeaderInfo (Node == "") means there is no leader.
// Created is when the leader became a candidate, not when it began to
// lead, which ZooKeeper does not record.
type LeaderInfo struct {
	Node    string    // full path of the leader's node
	Value   []byte    // the value the leader campaigned with
	Session int64     // the leader's session id
	Token   int64     // the term's fencing token (see Term.Token)
	Created time.Time // when the leader's node was created, by the server's clock
}

// leader returns the current leader, the zero LeaderInfo when no candidate
// is campaigning.
func (e *Election) leader(ctx context.Context) (LeaderInfo, error) {
	f, ok, err := e.q.First(ctx)
	if err != nil || !ok {
		return LeaderInfo{}, err
	}
	return LeaderInfo{Node: e.q.Dir + "/" + f.Name, Value: f.Data, Session: f.Stat.EphemeralOwner,
		Token: f.Stat.Czxid << hold.TokenShift, Created: time.UnixMilli(f.Stat.Ctime)}, nil
}
