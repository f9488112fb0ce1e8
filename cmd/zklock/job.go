package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// grant is what an acquisition gives the command it runs.
type grant struct {
	lost    <-chan struct{} // closed when holding may have ended
	revoked <-chan struct{} // closed on a revocation request (run --revocable); nil: never
	token   int64           // fencing token
	node    string          // our node's full path
	release func(ctx context.Context) error
}

// job is the flow shared by run and elect: connect, acquire (giving up on
// a signal or at the timeout), run the command while holding, release.
type job struct {
	*cli
	conn         *connFlags
	path         string
	argv         []string
	timeout      time.Duration // 0: wait forever
	try          bool          // run --try: refuse at once, so nothing is said of waiting
	grace        time.Duration // with graceSet; otherwise derived from the session (checkGrace)
	graceSet     bool
	quiet        bool
	exitCodeFile string // "" for none
	elect        bool   // an election's job: its reports speak of leading, not holding (see held)
	acquire      func(ctx context.Context, s *zklock.Session) (grant, error)
}

// held names what the job holds in its reports: the lock's path, or the
// leadership of an election's (ls calls its path a mutex/election; its
// holder is the leader, and a newcomer read "acquired" and "held by" as a
// lock's words).
func (j *job) held() string {
	if j.elect {
		return "the leadership of " + j.path
	}
	return j.path
}

// jobFlags are the flags run and elect share.
type jobFlags struct {
	grace        time.Duration
	quiet        bool
	exitCodeFile string
}

func (f *jobFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.grace, "grace", 0, "on loss of the lock, SIGKILL the command this long after SIGTERM; must be "+
		"shorter than the session's safety margin, a fifth of the session timeout (default: half the margin)")
	fs.BoolVar(&f.quiet, "quiet", false, "do not report waiting, reconnecting and acquiring on stderr")
	fs.StringVar(&f.exitCodeFile, "exit-code-file", "", "write the command's exit code to `FILE` when it ends "+
		"(FILE is emptied first: empty afterwards, the command did not run to its end)")
}

// refused is zklock's usage error code, after emptying --exit-code-file if
// it was read: an empty FILE then says the command did not run, so a
// command's own exit 2 (make's, for a failed build) is told from zklock's
// (exit 2 and FILE empty) without removing FILE first.
func (f *jobFlags) refused(code int) int {
	if f.exitCodeFile != "" {
		_ = os.WriteFile(f.exitCodeFile, nil, 0o644) // a FILE that cannot be written is said when it matters
	}
	return code
}

// job makes the job of run or elect.
func (f *jobFlags) job(c *cli, conn *connFlags, path string, argv []string, timeout time.Duration,
	set map[string]bool, acquire func(context.Context, *zklock.Session) (grant, error)) *job {
	conn.quiet = f.quiet
	return &job{cli: c, conn: conn, path: path, argv: argv, timeout: timeout, grace: f.grace,
		graceSet: set["grace"], quiet: f.quiet, exitCodeFile: f.exitCodeFile, acquire: acquire}
}

// minRelease bounds the release when the session timeout is shorter.
const minRelease = 5 * time.Second

// noticeDrain bounds how long zklock waits, on its way out, for a stderr
// that does not take its last reports.
const noticeDrain = time.Second

func (j *job) do() int {
	if j.exitCodeFile != "" {
		if err := os.WriteFile(j.exitCodeFile, nil, 0o644); err != nil {
			return j.failf(exitError, "", "--exit-code-file: %v", err)
		}
	}
	if code, ok := j.checkGrace(j.conn.sessionTimeout, false); !ok {
		return code
	}
	// From here on a write to a broken stderr fails with EPIPE instead of
	// killing zklock, and no report waits for stderr (see notices).
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	n := newNotices(j.stderr)
	defer n.close(noticeDrain)
	j.cli = &cli{stdout: j.stdout, stderr: n, name: j.name, tty: j.tty}
	return j.hold()
}

func (j *job) hold() int {
	sigs, stop := catchSignals()
	defer stop()
	ctx, unwatch := cancelOnSignal(context.Background(), sigs)
	rep := &reporter{j: j, began: time.Now()}
	s, code := rep.connect(ctx)
	if s == nil {
		unwatch()
		return code
	}
	defer rep.wait() // after s.Close, which ends the session calls its goroutines may wait in
	defer s.Close()
	rep.followSession(s)
	if code, ok := j.checkGrace(s.Client().Timing().Timeout, true); !ok {
		unwatch()
		return code
	}
	g, code, ok := j.wait(ctx, s, rep)
	unwatch() // from here on, signals are for the command
	if !ok {
		return code
	}
	defer j.release(s, g)
	if sc, ok := interrupted(ctx); ok { // a signal came just as we acquired
		return sc.exitCode()
	}
	return j.supervise(s, g, sigs)
}

// checkGrace checks a --grace against the safety margin of a session with
// timeout t (requested, or negotiated), or derives the grace period from
// it. The loss signal fires a margin before the servers may expire the
// session and grant the lock to another; SIGKILL must come before that,
// with room for the command's processes to die. The margin is the
// library's default, a fifth of the negotiated timeout (WithSafetyMargin).
func (j *job) checkGrace(t time.Duration, negotiated bool) (int, bool) {
	margin := t / 5
	switch {
	case j.graceSet && j.grace >= margin:
		of := fmt.Sprintf("a fifth of --session-timeout %v", t)
		if negotiated {
			of = fmt.Sprintf("a fifth of the %v session timeout the server granted for --session-timeout %v",
				t, j.conn.sessionTimeout)
		}
		return j.usagef("--grace %v is not shorter than the session's safety margin %v (%s): the command "+
			"could be killed after another holder was granted %s; give --grace below %v, or omit it for %v",
			j.grace, margin, of, j.path, margin, margin/2), false
	case !j.graceSet && negotiated:
		j.grace = margin / 2
	}
	return 0, true
}

// wait acquires, reporting its progress on stderr.
func (j *job) wait(ctx context.Context, s *zklock.Session, rep *reporter) (grant, int, bool) {
	if j.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, j.timeout)
		defer cancel()
	}
	stop := func() {}
	if !j.try { // a --try that refuses never waited: it must not say it waits behind anyone
		stop = rep.followQueue(ctx, s)
	}
	g, err := j.acquire(ctx, s)
	stop()
	if err != nil {
		return grant{}, j.waitFailed(ctx, err), false
	}
	rep.acquired(g)
	return g, 0, true
}

// waitFailed reports why the acquisition failed and returns the exit code.
func (j *job) waitFailed(ctx context.Context, err error) int {
	if sc, ok := interrupted(ctx); ok {
		j.warnf("%v while %s; nothing was run", sc, j.waiting())
		return sc.exitCode()
	}
	var le *layoutError
	var locked *zklock.LockedError
	switch {
	case errors.As(err, &locked) && locked.Queued:
		return j.failf(exitBusy, "", "%s has a writer queued ahead, which readers do not pass (session 0x%x, data %s)",
			j.path, locked.Session, printable(string(locked.Data), 60))
	case errors.As(err, &locked) && string(locked.Data) == queue.RevokeMessage:
		return j.failf(exitBusy, "", "%s is %s session 0x%x (revocation requested)", j.path, j.heldBy(), locked.Session)
	case errors.As(err, &locked):
		return j.failf(exitBusy, "", "%s is %s %s (session 0x%x)", j.path, j.heldBy(),
			printable(string(locked.Data), 60), locked.Session)
	case errors.Is(err, errs.ErrNotAcquired): // a semaphore's ErrLocked
		return j.failf(exitBusy, "", "%s has no free slot, or others wait for one", j.path)
	case errors.Is(err, zklock.ErrLocked):
		return j.failf(exitBusy, "", "%s is taken, or others wait for it", j.path)
	case errors.Is(err, context.DeadlineExceeded):
		if j.elect {
			return j.failf(exitTimeout, "", "not elected leader of %s within %v", j.path, j.timeout)
		}
		return j.failf(exitTimeout, "", "%s not acquired within %v", j.path, j.timeout)
	case errors.Is(err, errs.ErrLimitMismatch): // an ErrInvalidArgument
		return j.failf(exitError, "every holder must pass the same -n", "%v", err)
	case errors.As(err, &le):
		return j.failf(exitError, le.hint(), "%v", err)
	}
	return j.opFailed(err)
}

// release gives the lock back. When it cannot, the node still goes when
// the session is closed (or expires), so it only warns.
func (j *job) release(s *zklock.Session, g grant) {
	ctx, cancel := context.WithTimeout(context.Background(), max(s.Client().Timing().Timeout, minRelease))
	defer cancel()
	err := g.release(ctx)
	if err != nil && !errors.Is(err, zklock.ErrLockLost) {
		j.warnf("release %s: %v; it is released when the session closes", j.path, err)
	}
}

// writeExitCode writes the command's exit code to --exit-code-file.
func (j *job) writeExitCode(code int) {
	if j.exitCodeFile == "" {
		return
	}
	if err := os.WriteFile(j.exitCodeFile, []byte(strconv.Itoa(code)+"\n"), 0o644); err != nil {
		j.warnf("--exit-code-file: %v", err)
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
