package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Bounds of one workload.
const (
	maxRounds    = 1_000_000        // acquisitions per workload and process
	acquireLimit = 30 * time.Second // one acquisition, then it starts over
	opLimit      = 10 * time.Second // one read, multi or release
)

// Receipt is what a committed increment leaves under the primitive's
// receipts node, in the same multi as the counter write: the proof that a
// write whose reply was lost did commit.
type Receipt struct {
	Seq  int64  `json:"seq,omitempty"`  // the receipt node's sequence number: commit order within the primitive (not in the node's data)
	Zxid int64  `json:"zxid,omitempty"` // the receipt node's czxid: commit order across primitives (not in the node's data)
	Proc string `json:"proc"`
	W    int64  `json:"w"`
	Tok  int64  `json:"tok"`
	V    int64  `json:"v"`
}

// workload runs one primitive's rounds in one worker process.
type workload struct {
	prim    string
	g       int // which of the process's workloads of prim
	proc    string
	paths   Paths
	s       *zklock.Session
	acquire acquirer
	log     *Log
	fail    func(error) // a log write failed: the worker stops with it
	rnd     *rand.Rand
	broken  Broken
	wid     *atomic.Int64 // write ids, shared by the process's workloads
	pg      *pgStore      // the PostgreSQL resource, nil if the run has none
}

func (w *workload) run(ctx context.Context) {
	for i := 0; i < maxRounds && ctx.Err() == nil; i++ {
		w.round(ctx)
	}
}

func (w *workload) add(e Event) {
	e.Proc, e.Prim, e.G = w.proc, w.prim, w.g
	if err := w.log.Add(e); err != nil {
		w.fail(err)
	}
}

// deadline returns the session's ownership deadline on the clock of Now,
// or 0 once h's loss signal has fired: a signal still open after the
// deadline was read shows that it was read while h's epoch was live (a
// later epoch's deadline says nothing of h). Now is read before the Go
// clock, so that the conversion errs early, by the microseconds between
// the two readings.
func (w *workload) deadline(h *hold) int64 {
	now, wall := Now(), time.Now()
	d := w.s.OwnershipDeadline()
	select {
	case <-h.lost:
		return 0
	default:
	}
	dl := now + int64(d.Sub(wall))
	if w.broken.LateDeadline {
		dl += int64(w.lateBy())
	}
	return dl
}

// round acquires, works while it believes it holds, and releases.
func (w *workload) round(ctx context.Context) {
	w.add(Event{Ev: EvWait, T: Now()})
	actx, cancel := context.WithTimeout(ctx, acquireLimit)
	h, err := w.acquire(actx, w.rnd)
	cancel()
	if err != nil {
		w.add(Event{Ev: EvWaitFail, T: Now(), Err: err.Error()})
		sleep(ctx, 100*time.Millisecond)
		return
	}
	w.add(Event{Ev: EvAcquire, T: Now(), Mode: h.mode, Tok: h.token, N: h.n, Dl: w.deadline(h)})
	var late time.Duration
	if w.broken.LateLost {
		late = w.lateBy()
	}
	seen := watchLoss(h.lost, late)
	w.work(ctx, h, seen.at)
	end, why := Now(), WhyReleased
	if l := seen.at(); l != 0 && !w.broken.IgnoreLost {
		end, why = l, WhyLost
	}
	w.add(Event{Ev: EvRelease, T: end, Mode: h.mode, Tok: h.token, Res: why})
	seen.stop()
	w.release(h)
	sleep(ctx, time.Duration(w.rnd.IntN(40))*time.Millisecond)
}

// work increments the counter one to three times (a reader only reads
// it), pausing up to 50ms (200ms for a broken workload) before each step:
// a fault often lands mid-hold. With a PostgreSQL resource, an exclusive
// holder's every step (a retried one too) then writes it through the
// fence (pgWrite): after a ZooKeeper write held up by a fault, too.
// A step that failed (a read that failed, a write whose outcome is
// unknown) is tried again, up to maxTries steps in all, until the loss
// signal is seen: a holder cut off from the servers holds on until it is
// told, as a user who works until told would, and the claim that it is
// told before a rival acquires is put to the test.
func (w *workload) work(ctx context.Context, h *hold, lostAt func() int64) {
	n, pause := 1+w.rnd.IntN(3), 50
	if w.broken != (Broken{}) {
		// A broken holder is slow, so that a fault aimed at it while it
		// holds (Config.Victims) lands mid-hold rather than after it.
		pause = 200
	}
	for i, tries := 0, 0; i < n && tries < maxTries && ctx.Err() == nil; tries++ {
		sleep(ctx, time.Duration(w.rnd.IntN(pause))*time.Millisecond)
		if h.mode == ModeRead {
			if _, _, err := w.read(ctx); err == nil || lostAt() != 0 {
				i++
			}
			continue
		}
		done := w.increment(ctx, h, lostAt)
		w.pgWrite(ctx, h, lostAt)
		if done {
			i++
		}
	}
}

// maxTries bounds the steps of one hold: with steps that fail at once,
// 2.5s of retries or more, past a cut-off holder's deadline.
const maxTries = 100

// release gives the hold back, retrying a few times: a handle that still
// holds could not acquire again.
func (w *workload) release(h *hold) {
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), opLimit)
		err := h.release(ctx)
		cancel()
		if err == nil || errors.Is(err, zklock.ErrLockLost) || errors.Is(err, zklock.ErrNotLocked) ||
			errors.Is(err, zklock.ErrSessionClosed) {
			return
		}
	}
}

// increment reads the counter and writes it plus one in a multi with the
// hold's guard and a receipt; it reports false when the read failed or the
// write's outcome is unknown, and the loss signal had not been seen: the
// holder does not know that its increment is in, and tries again. The exclusive primitives write without a
// version check, so the lock alone protects the read-modify-write and a
// second holder shows as a lost increment; semaphore holders are concurrent
// by design and check the version.
func (w *workload) increment(ctx context.Context, h *hold, lostAt func() int64) bool {
	id := w.wid.Add(1)
	if lostAt() != 0 && !w.broken.IgnoreLost {
		w.add(Event{Ev: EvWrite, T: Now(), Tok: h.token, W: id, Res: ResSkipped})
		return true
	}
	data, st, err := w.read(ctx)
	if err != nil {
		w.add(Event{Ev: EvWrite, T: Now(), Tok: h.token, W: id, Res: ResSkipped, Err: err.Error()})
		return w.stops(lostAt)
	}
	// Again, as late as possible: the read may have waited out a fault.
	lost := lostAt() != 0
	if lost && !w.broken.IgnoreLost {
		w.add(Event{Ev: EvWrite, T: Now(), Tok: h.token, W: id, Res: ResSkipped})
		return true
	}
	cur, _ := strconv.ParseInt(string(data), 10, 64)
	v := cur + 1
	version := int32(-1)
	if h.mode == ModeLease {
		version = st.Version
	}
	rc, _ := json.Marshal(Receipt{Proc: w.proc, W: id, Tok: h.token, V: v})
	var ops []zk.Op
	if !w.broken.NoGuard {
		ops = append(ops, h.guard...)
	}
	ops = append(ops,
		&zk.SetDataOp{Path: w.paths.Counter(w.prim), Data: []byte(strconv.FormatInt(v, 10)), Version: version},
		&zk.CreateOp{Path: w.paths.Receipts(w.prim) + "/w-", Data: rc, Mode: zk.ModePersistentSequential})
	cctx, cancel := context.WithTimeout(ctx, opLimit)
	dl := w.deadline(h)
	t0 := Now()
	resps, err := w.s.Client().Multi(cctx, ops...)
	t1 := Now()
	cancel()
	e := Event{Ev: EvWrite, T: t0, T1: t1, Tok: h.token, W: id, V: v, Res: outcome(err), Lost: lost, Dl: dl}
	if err != nil {
		e.Err = err.Error()
	} else if len(resps) > 0 {
		e.Seq, _ = receiptSeq(resps[len(resps)-1].Path)
	}
	w.add(e)
	return e.Res != ResUnknown || w.stops(lostAt)
}

// stops reports whether a holder whose step failed counts it done: once
// it saw the loss signal, unless it ignores that signal ("ignorelost"),
// which tries again until a write is in, as the bug it plays would: its
// reads fail while it is cut off, and its write, unguarded ("noguard"),
// commits once the client is back under a new session.
func (w *workload) stops(lostAt func() int64) bool {
	return lostAt() != 0 && !w.broken.IgnoreLost
}

// read reads the counter, waiting for a connection at most opLimit.
func (w *workload) read(ctx context.Context) ([]byte, zk.Stat, error) {
	ctx, cancel := context.WithTimeout(ctx, opLimit)
	defer cancel()
	return w.s.Client().Get(ctx, w.paths.Counter(w.prim))
}

// receiptSeq returns the sequence number of the receipt node at path
// (".../w-0000000042": 42).
func receiptSeq(path string) (int64, error) {
	return strconv.ParseInt(path[strings.LastIndex(path, "w-")+2:], 10, 64)
}

// outcome classifies a multi's error: a refusal by the server means nothing
// was applied; anything else (connection loss, timeout, ctx) leaves it
// unknown.
func outcome(err error) string {
	switch {
	case err == nil:
		return ResOK
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists):
		return ResRejected
	}
	return ResUnknown
}

// lossWatch records when a hold's loss signal was first seen; with a
// delay (the "latelost" bug), that long after it fired.
type lossWatch struct {
	lost  <-chan struct{}
	delay time.Duration
	t     atomic.Int64
	quit  chan struct{}
	done  chan struct{}
}

func watchLoss(lost <-chan struct{}, delay time.Duration) *lossWatch {
	l := &lossWatch{lost: lost, delay: delay, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		select {
		case <-lost:
		case <-l.quit:
			return
		}
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-l.quit:
				return
			}
		}
		l.t.CompareAndSwap(0, Now())
	}()
	return l
}

// at returns when the loss was first seen, or 0.
func (l *lossWatch) at() int64 {
	if l.delay == 0 {
		select {
		case <-l.lost:
			l.t.CompareAndSwap(0, Now())
		default:
		}
	}
	return l.t.Load()
}

func (l *lossWatch) stop() { close(l.quit); <-l.done }

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// lateBy is how late the "latelost" and "latedeadline" modes are: the
// session timeout, longer than the lead the loss signal has over a rival
// (the margin, and on a follower's connection syncLimit*tickTime and a tick
// and a half), so that a signal this late comes after the rival holds.
func (w *workload) lateBy() time.Duration { return w.s.Client().Timing().Timeout }
