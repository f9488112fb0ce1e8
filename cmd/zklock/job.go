package main

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/zklock/zklock"
)

// grant is what an acquisition gives the command it runs.
type grant struct {
	lost    <-chan struct{} // closed when holding may have ended
	token   int64           // fencing token
	node    string          // our node's full path
	release func(ctx context.Context) error
}

// job is the flow shared by run and elect: connect, acquire (giving up on
// a signal or at the timeout), run the command while holding, release.
type job struct {
	*cli
	conn     *connFlags
	path     string
	argv     []string
	timeout  time.Duration // 0: wait forever
	grace    time.Duration
	acquire  func(ctx context.Context, s *zklock.Session) (grant, error)
	describe func(ctx context.Context, s *zklock.Session) string // the queue, for the progress line
}

// minRelease bounds the release when the session timeout is shorter.
const minRelease = 5 * time.Second

func (j *job) do() int {
	sigs, stop := catchSignals()
	defer stop()
	ctx, unwatch := cancelOnSignal(context.Background(), sigs)
	s, code := j.connect(ctx, j.conn)
	if s == nil {
		unwatch()
		return code
	}
	defer s.Close()
	g, code, ok := j.wait(ctx, s)
	unwatch() // from here on, signals are for the command
	if !ok {
		return code
	}
	defer j.release(s, g)
	if sc, ok := interrupted(ctx); ok { // a signal came just as we acquired
		return sc.exitCode()
	}
	return j.supervise(g, sigs)
}

// wait acquires, showing progress on a terminal while it waits.
func (j *job) wait(ctx context.Context, s *zklock.Session) (grant, int, bool) {
	if j.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, j.timeout)
		defer cancel()
	}
	stop := startProgress(ctx, j.stderr, j.path, func(ctx context.Context) string { return j.describe(ctx, s) })
	g, err := j.acquire(ctx, s)
	stop()
	if err != nil {
		return grant{}, j.waitFailed(ctx, err), false
	}
	return g, 0, true
}

// waitFailed reports why the acquisition failed and returns the exit code.
func (j *job) waitFailed(ctx context.Context, err error) int {
	if sc, ok := interrupted(ctx); ok {
		j.warnf("%v while waiting for %s; nothing was run", sc, j.path)
		return sc.exitCode()
	}
	var le *layoutError
	var locked *zklock.LockedError
	switch {
	case errors.As(err, &locked):
		return j.failf(exitBusy, "", "%s is held by %s (session 0x%x)", j.path,
			printable(string(locked.Data), 60), locked.Session)
	case errors.Is(err, zklock.ErrNotAcquired):
		return j.failf(exitBusy, "", "%s has no free slot, or others wait for one", j.path)
	case errors.Is(err, zklock.ErrLocked):
		return j.failf(exitBusy, "", "%s is taken, or others wait for it", j.path)
	case errors.Is(err, context.DeadlineExceeded):
		return j.failf(exitTimeout, "", "%s not acquired within %v", j.path, j.timeout)
	case errors.Is(err, zklock.ErrLimitMismatch):
		return j.failf(exitError, "every holder must pass the same -n", "%v", err)
	case errors.As(err, &le):
		return j.failf(exitError, le.hint(), "%v", err)
	}
	return j.opFailed(err)
}

// release gives the lock back. When it cannot, the node still goes when
// the session is closed (or expires), so it only warns.
func (j *job) release(s *zklock.Session, g grant) {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.Timeout(), minRelease))
	defer cancel()
	err := g.release(ctx)
	if err != nil && !errors.Is(err, zklock.ErrLockLost) && !errors.Is(err, zklock.ErrLeaseLost) &&
		!errors.Is(err, zklock.ErrLeadershipLost) {
		j.warnf("release %s: %v; it is released when the session closes", j.path, err)
	}
}

// env is what the command learns about its acquisition.
func (j *job) env(g grant) []string {
	return []string{
		"ZKLOCK_PATH=" + j.path,
		"ZKLOCK_TOKEN=" + strconv.FormatInt(g.token, 10),
		"ZKLOCK_NODE=" + g.node,
		"ZKLOCK_HELD=1",
	}
}
