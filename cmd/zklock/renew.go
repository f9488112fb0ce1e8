package main

import (
	"fmt"
	"time"

	"github.com/zklock/zklock"
)

// renewer passes the session's ownership deadline on to the supervisor as
// it moves (see guard), and follows the session timeout.
type renewer struct {
	s       *zklock.Session
	timeout time.Duration // the session timeout last seen
	sent    time.Time     // the deadline last passed on
}

// renewEvery is how often zklock looks at the deadline and the timeout:
// an eighth of the safety margin, within [10ms, 250ms]. The supervisor
// sends SIGTERM only half the grace period after a deadline, which absorbs
// this lag in all but a grace shorter than twice the period.
func renewEvery(timeout time.Duration) time.Duration {
	return min(max(timeout/5/8, 10*time.Millisecond), 250*time.Millisecond)
}

// clockAt converts d, an instant on Go's monotonic clock, to sharedClock.
func clockAt(d time.Time) int64 { return sharedClock() + int64(time.Until(d)) }

// renew passes a moved deadline, or a grace period shortened by a lower
// session timeout, on to the supervisor. A deadline that has passed is
// never moved: the epoch that held the lock is over (the loss signal
// follows), and a later deadline is another epoch's.
func (j *job) renew(c *command, r *renewer) {
	if !time.Now().Before(r.sent) {
		return
	}
	changed := false
	if t := r.s.Timing().Timeout; t != r.timeout {
		r.timeout = t
		changed = j.regrace(t)
	}
	d := r.s.OwnershipDeadline()
	if d.Equal(r.sent) && !changed {
		return
	}
	r.sent = d
	c.send(fmt.Sprintf("deadline %d %d", clockAt(d), int64(j.grace)))
}

// regrace re-checks the grace period against the safety margin of the
// session timeout t, which changed since checkGrace (a reconnect was
// granted a lower one): a derived grace is derived again, and a --grace
// that is no longer shorter than the margin is shortened to half of it,
// so that SIGKILL still comes before the servers may expire the session.
// It reports whether the grace period changed, and says so on stderr.
func (j *job) regrace(t time.Duration) bool {
	margin := t / 5
	g := j.grace
	if !j.graceSet || g >= margin {
		g = margin / 2
	}
	if g == j.grace {
		return false
	}
	j.warnf("the session timeout is now %v (safety margin %v): the grace period after SIGTERM is now %v, was %v",
		t, margin, g, j.grace)
	j.grace = g
	return true
}
