package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/fanout"
	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/session"
	"github.com/zklock/zklock/internal/zkhook"
	"github.com/zklock/zklock/zk"
)

// Session is one ZooKeeper session shared by every primitive of a process.
//
// It survives connection loss (zk.StateSuspended, then zk.StateReconnected with
// the same session id) and session expiry (zk.StateExpired, then zk.StateConnected
// with a new id), retries transient errors within each caller's ctx, and
// publishes every transition to the subscribers of its Client
// (zk.Client.Subscribe) without dropping any.
//
// Its central promise is the ownership deadline: the time after which the
// server may have expired the session, computed from the send time of the
// request behind the last reply, not from when the client noticed trouble.
// Every acquisition's loss signal fires at that deadline or at expiry,
// whichever is first, so a holder learns it may have lost a lock before
// another client can be granted it.
//
// A Session is safe for concurrent use. It must not be copied.
type Session struct {
	c       *session.Conn
	zc      *zk.Client // Client's: over c, with the session's ACL
	qc      queue.Conn // when set, what the primitives run on in place of c (conn)
	opts    sessionOptions
	events  *fanout.Hub[zk.Event] // the transitions, for zk.Client.Subscribe
	metrics *metricsState         // nil without WithMetrics

	closeOnce sync.Once
	done      chan struct{} // closed when Close has finished

	owners  sync.Map     // ReentrantMutex holders by path, for ErrNotOwner
	cohorts hold.Cohorts // WithCohort's cohorts by path
	confs   sync.Map     // the lines' shared hold.Conf, by confKey
}

// NewSession connects to ZooKeeper and waits until a session is established
// or ctx ends. On error nothing is left running. When ctx ends first, the
// error wraps ctx's error and the last connection attempt's (errors.Is
// finds context.DeadlineExceeded, and syscall.ECONNREFUSED for a server
// that refused the connection, *net.DNSError for a name that does not
// resolve, ...); a credential the server rejects makes it return
// zk.ErrAuthFailed, and servers that all answer in another protocol (an HTTP
// port) zk.ErrNotZooKeeper, both at once.
func NewSession(ctx context.Context, opts ...SessionOption) (*Session, error) {
	if ctx == nil {
		return nil, errs.ErrNilContext
	}
	o := defaultSessionOptions()
	for _, opt := range opts {
		if opt == nil {
			return nil, invalid("nil option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	s := &Session{opts: o, done: make(chan struct{})}
	s.events = fanout.New(func(ev zk.Event) bool { return ev.State == zk.StateClosed })
	if o.metrics != nil {
		s.metrics = newMetricsState(o.metrics)
	}
	c, err := session.Dial(ctx, session.Config{
		Servers:    o.servers,
		Timeout:    o.timeout,
		Margin:     o.margin,
		Logger:     o.logger,
		ACL:        o.acl,
		Creds:      o.creds,
		Dialer:     o.dialer,
		TLS:        o.tls,
		Backoff:    o.backoff,
		MaxPacket:  o.maxReq,
		Timing:     o.timing,
		TimingSet:  o.timingSet,
		OnState:    s.onState,
		OnEpochEnd: s.metrics.epochEnded,
		// What the recipes know of their nodes, handed down.
		Announces:     queue.Announces,
		PrimitivePath: queue.PrimitivePath,
	})
	if err != nil {
		s.metrics.wait() // Dial closed the session, which reported StateClosed
		if errors.Is(err, session.ErrInvalid) {
			return nil, fmt.Errorf("%w: %v", errs.ErrInvalidOption, err)
		}
		return nil, err
	}
	s.c = c
	s.zc = zkhook.NewClient(c, o.acl, s.events).(*zk.Client)
	return s, nil
}

// Client returns the Session's ZooKeeper client: raw reads and writes,
// watches, and Multi, where a hold's Guard makes writes conditional on
// holding. It shares the Session's connection, credentials and ACL
// (WithACL), and is valid for the Session's life: every call returns the
// same one.
func (s *Session) Client() *zk.Client { return s.zc }

// onState publishes a transition to subscribers and Metrics. It runs under
// the session machine's lock, so it only queues.
func (s *Session) onState(st session.State, sid int64, at time.Time) {
	s.events.Publish(zk.Event{State: zk.State(st), SessionID: sid, Time: at})
	s.metrics.state(zk.State(st))
}

// Close ends the ZooKeeper session: the server deletes its ephemeral nodes
// at once (if it can be reached within a second; otherwise they vanish when
// the server expires the session). Close stops every goroutine the session
// started, fires every outstanding loss signal, publishes zk.StateClosed and
// then closes Done. Blocking calls in progress return ErrSessionClosed.
// Close is idempotent and always returns nil.
func (s *Session) Close() error {
	if err := checkSession(s); err != nil {
		return err
	}
	s.closeOnce.Do(func() {
		s.c.Close()
		s.metrics.wait() // the StateClosed report is the reporter's last
		close(s.done)
	})
	return nil
}

// closed reports whether Close has begun: the session machine is closed
// from the moment Close ends its epoch. A Session without a machine (the
// internal tests' fake, over queuetest's Conn) is never closed.
func (s *Session) closed() bool { return s.c != nil && s.c.State() == session.StateClosed }

// Done returns a channel that is closed when Close has finished, as
// context's Done says the work is over.
//
// It is not etcd's Session.Done, which closes when the lease behind the
// session is lost: a zklock Session outlives a lost or expired ZooKeeper
// session (it reconnects and, after expiry, establishes a new one, and
// queued acquisitions re-enqueue), so "lost" is per hold: use each hold's
// Lost (and OwnershipDeadline for the current epoch's deadline).
func (s *Session) Done() <-chan struct{} { return s.done }

// checkSession refuses a nil Session, and one not made by NewSession (the
// zero value), with ErrInvalidArgument.
func checkSession(s *Session) error {
	switch {
	case s == nil:
		return fmt.Errorf("%w: nil session", ErrInvalidArgument)
	case s.done == nil: // NewSession makes it
		return fmt.Errorf("%w: a Session not made by NewSession", ErrInvalidArgument)
	}
	return nil
}

// conn is the queue.Conn the primitives, Break and Revoke run on: the
// session machine, or the in-memory server of the package's internal tests
// (fake_internal_test.go), which set qc.
func (s *Session) conn() queue.Conn {
	if s.qc != nil {
		return s.qc
	}
	return s.c
}

// OwnershipDeadline returns the instant after which the server may have
// expired the session: the anchor, plus the session timeout, minus the
// safety margin.
//
// Only the leader of an ensemble expires sessions, so the anchor is the
// latest time at which the leader is proven to have restarted the
// session's clock: the send time of a request answered by the leader or a
// standalone server, or of a (re)connect, which the leader validates. A
// follower only passes its clients' requests on to the leader with its
// answer to the leader's next ping, and one cut off from its leader goes on
// answering for up to syncLimit*tickTime; so on a follower's connection the
// anchor is the send time of a request answered at least that plus a tick
// before a later one was sent (docs/ownership.md has the argument, and the
// condition: WithEnsembleTiming). The timeout is the lowest any server
// granted the session; s.Client().Timing() (a zk.Timing) reports it, the
// servers' timing in use, and where zklock has them from. The server
// expires a session only a full timeout after its clock restarted, so it
// cannot do so before anchor+timeout. The margin (by default a fifth of
// the timeout; see WithSafetyMargin) leaves the holder time to stop work
// after the signal and absorbs timer lateness on a loaded machine.
//
// A connect that may have reached a server granting a shorter timeout
// than the session's (its maxSessionTimeout, or unknown where it refuses
// 'conf') caps the deadline until its response arrives. When that, or a
// change of the servers' timing, ends the epoch before a deadline this
// returned, zklock keeps the epoch's nodes until that deadline: a rival is
// granted before it only if the server itself expired the session sooner.
//
// The deadline is measured on Go's monotonic clock. On Linux a resume from
// suspend (which that clock does not count) is detected: Lost called after
// it finds the epoch ended, and a loss signal obtained before it closes
// within min(1s, timeout/4) of the resume; elsewhere, or for a VM paused
// by its hypervisor without a guest suspend, it is not detected. A process frozen past the deadline
// (SIGSTOP, a VM paused) may act before its loss signal fires: only
// fencing (Guard, Token) covers that.
func (s *Session) OwnershipDeadline() time.Time { return s.c.ToldDeadline() }
