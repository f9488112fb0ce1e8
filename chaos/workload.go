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

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock"
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
	rnd     *rand.Rand
	broken  Broken
	wid     *atomic.Int64 // write ids, shared by the process's workloads
}

func (w *workload) run(ctx context.Context) {
	for i := 0; i < maxRounds && ctx.Err() == nil; i++ {
		w.round(ctx)
	}
}

func (w *workload) add(e Event) {
	e.Proc, e.Prim, e.G = w.proc, w.prim, w.g
	_ = w.log.Add(e) // a worker that cannot log has its run fail at the check
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
	w.add(Event{Ev: EvAcquire, T: Now(), Mode: h.mode, Tok: h.token, N: h.n})
	seen := watchLoss(h.lost)
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
// it), pausing up to 50ms before each step: a fault often lands mid-hold.
func (w *workload) work(ctx context.Context, h *hold, lostAt func() int64) {
	n := 1 + w.rnd.IntN(3)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		sleep(ctx, time.Duration(w.rnd.IntN(50))*time.Millisecond)
		if h.mode == ModeRead {
			_, _, _ = w.s.Conn().Get(w.paths.Counter(w.prim))
			continue
		}
		w.increment(ctx, h, lostAt)
	}
}

// release gives the hold back, retrying a few times: a handle that still
// holds could not acquire again.
func (w *workload) release(h *hold) {
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), opLimit)
		err := h.release(ctx)
		cancel()
		if err == nil || errors.Is(err, zklock.ErrLockLost) || errors.Is(err, zklock.ErrLeaseLost) ||
			errors.Is(err, zklock.ErrLeadershipLost) || errors.Is(err, zklock.ErrNotLocked) ||
			errors.Is(err, zklock.ErrSessionClosed) {
			return
		}
	}
}

// increment reads the counter and writes it plus one in a multi with the
// hold's guard and a receipt. The exclusive primitives write without a
// version check, so the lock alone protects the read-modify-write and a
// second holder shows as a lost increment; semaphore holders are concurrent
// by design and check the version.
func (w *workload) increment(ctx context.Context, h *hold, lostAt func() int64) {
	id := w.wid.Add(1)
	lost := lostAt() != 0
	if lost && !w.broken.IgnoreLost {
		w.add(Event{Ev: EvWrite, T: Now(), Tok: h.token, W: id, Res: ResSkipped})
		return
	}
	data, st, err := w.s.Conn().Get(w.paths.Counter(w.prim))
	if err != nil {
		w.add(Event{Ev: EvWrite, T: Now(), Tok: h.token, W: id, Res: ResSkipped, Err: err.Error()})
		return
	}
	cur, _ := strconv.ParseInt(string(data), 10, 64)
	v := cur + 1
	version := int32(-1)
	if h.mode == ModeLease {
		version = st.Version
	}
	rc, _ := json.Marshal(Receipt{Proc: w.proc, W: id, Tok: h.token, V: v})
	var ops []any
	if !w.broken.NoGuard {
		ops = append(ops, h.guard)
	}
	ops = append(ops,
		&zk.SetDataRequest{Path: w.paths.Counter(w.prim), Data: []byte(strconv.FormatInt(v, 10)), Version: version},
		&zk.CreateRequest{Path: w.paths.Receipts(w.prim) + "/w-", Data: rc, Flags: zk.FlagSequence, Acl: zk.WorldACL(zk.PermAll)})
	cctx, cancel := context.WithTimeout(ctx, opLimit)
	t0 := Now()
	resps, err := w.s.Multi(cctx, ops...)
	t1 := Now()
	cancel()
	e := Event{Ev: EvWrite, T: t0, T1: t1, Tok: h.token, W: id, V: v, Res: outcome(err), Lost: lost}
	if err != nil {
		e.Err = err.Error()
	} else if len(resps) > 0 {
		e.Seq, _ = receiptSeq(resps[len(resps)-1].String)
	}
	w.add(e)
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

// lossWatch records when a hold's loss signal was first seen.
type lossWatch struct {
	lost <-chan struct{}
	t    atomic.Int64
	quit chan struct{}
	done chan struct{}
}

func watchLoss(lost <-chan struct{}) *lossWatch {
	l := &lossWatch{lost: lost, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		select {
		case <-lost:
			l.t.CompareAndSwap(0, Now())
		case <-l.quit:
		}
	}()
	return l
}

// at returns when the loss was first seen, or 0.
func (l *lossWatch) at() int64 {
	select {
	case <-l.lost:
		l.t.CompareAndSwap(0, Now())
	default:
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
