package zklock

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/cenkalti/backoff/v4"
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/session"
	"github.com/zklock/zklock/zk"
)

// SessionOption configures a Session. Options are applied in order; a bad
// value makes NewSession return an error wrapping ErrInvalidArgument.
type SessionOption func(*sessionOptions) error

// dialFunc is what WithDialer takes.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

type sessionOptions struct {
	servers   []string
	timeout   time.Duration
	margin    time.Duration // 0: derived from the negotiated timeout
	logger    *slog.Logger
	acl       []client.ACL
	creds     []client.Credential
	dialer    dialFunc    // nil: a net.Dialer
	tls       *tls.Config // nil: plain connections
	metrics   Metrics     // nil: none
	backoff   func() backoff.BackOff
	maxReq    int // largest request body the server accepts (jute.maxbuffer)
	timing    session.Timing
	timingSet bool // WithEnsembleTiming was given
}

func defaultSessionOptions() sessionOptions {
	return sessionOptions{
		servers: []string{"127.0.0.1:2181"},
		timeout: defaultSessionTimeout,
		timing:  session.Timing{Tick: 2 * time.Second, SyncLimit: 5},
		logger:  slog.New(warnDefault{}),
		acl:     toClientACL(zk.WorldACL(zk.PermAll)),
		backoff: defaultBackoff,
		maxReq:  defaultMaxRequestSize,
	}
}

// defaultBackoff retries quickly at first (a leader election or a reconnect
// to another server usually takes well under a second) and settles at one
// attempt a second; the caller's ctx bounds the total.
func defaultBackoff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 20 * time.Millisecond
	b.MaxInterval = time.Second
	b.MaxElapsedTime = 0
	return b
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errs.ErrInvalidOption}, args...)...)
}

// WithServers sets the ZooKeeper servers as "host:port" addresses; white
// space around an address is dropped (as strings.Split of "a, b" leaves
// it), white space inside one is refused. The default is "127.0.0.1:2181".
func WithServers(addrs ...string) SessionOption {
	return func(o *sessionOptions) error {
		if len(addrs) == 0 {
			return invalid("empty server list")
		}
		addrs = slices.Clone(addrs)
		for i, a := range addrs {
			a = strings.TrimSpace(a)
			addrs[i] = a
			if strings.ContainsFunc(a, unicode.IsSpace) {
				return invalid("server %q: white space inside the address", a)
			}
			host, port, err := net.SplitHostPort(a)
			if err != nil {
				return invalid("server %q: %v", a, err)
			}
			if p, err := strconv.Atoi(port); host == "" || err != nil || p < 1 || p > 65535 {
				return invalid("server %q: want host:port with a port from 1 to 65535", a)
			}
		}
		o.servers = addrs
		return nil
	}
}

// defaultSessionTimeout is long enough to hold a lock through a follower
// of an ensemble configured as ZooKeeper's sample (tickTime 2s, syncLimit
// 5 or 10; see WithEnsembleTiming): a shorter one is refused there by
// NewSession.
const defaultSessionTimeout = 30 * time.Second

// WithSessionTimeout sets the session timeout requested from the server; the
// server clamps it to its [minSessionTimeout, maxSessionTimeout] (by default
// 2 and 20 ticks), and zklock uses the lowest timeout any server granted the
// session, or would grant it as far as their 'conf' tells. Through a
// follower of an ensemble, the timeout must exceed the servers'
// syncLimit*tickTime plus a tick and a half, plus the safety margin
// (Session.OwnershipDeadline says why): NewSession refuses a shorter one
// with the numbers. The default is 30s, long enough for a follower of an
// ensemble configured as ZooKeeper's sample (tickTime 2s, syncLimit 5 or
// 10).
func WithSessionTimeout(d time.Duration) SessionOption {
	return func(o *sessionOptions) error {
		if d < time.Millisecond {
			return invalid("session timeout %v must be at least 1ms", d)
		}
		o.timeout = d
		return nil
	}
}

// WithSafetyMargin sets how long before the server could expire the session
// the ownership deadline falls (see Session.OwnershipDeadline). The default is
// one fifth of the negotiated session timeout. The margin must be below the
// negotiated timeout, which only the server's answer tells: NewSession
// returns an error wrapping ErrInvalidArgument once connected if it is not.
func WithSafetyMargin(d time.Duration) SessionOption {
	return func(o *sessionOptions) error {
		if d <= 0 {
			return invalid("safety margin %v must be positive", d)
		}
		o.margin = d
		return nil
	}
}

// WithEnsembleTiming states the servers' tickTime and syncLimit (in
// ticks): a follower cut off from its leader goes on answering its clients
// for up to syncLimit*tickTime, so the ownership deadline behind a
// follower's replies must trail them by that much and a tick more. zklock
// reads both from each server's 'conf' four-letter word where the servers
// allow it (4lw.commands.whitelist), at NewSession and again at every
// connect. Where an ensemble's server does not answer 'conf' (a stock
// ZooKeeper's whitelist is srvr alone), or a listed server is not reached
// and no server reached tells an ensemble's timing (one beside a
// standalone server might be a follower), NewSession returns
// ErrTimingUnknown unless this option states the timing; zklock then rests
// on the statement, logs that once at WARN, and zk.Client.Timing (from
// Session.Client) reports it as "stated". Without 'conf' the servers' session timeout bounds are
// unknown too, and the ownership epoch ends at every reconnect
// (docs/ownership.md). Given, the timing is also a floor under what the
// servers tell. There is no default. A standalone server (its 'srvr' says
// so) needs none.
func WithEnsembleTiming(tick time.Duration, syncLimit int) SessionOption {
	return func(o *sessionOptions) error {
		if tick < time.Millisecond || syncLimit < 1 {
			return invalid("ensemble timing: tick %v must be at least 1ms and syncLimit %d at least 1", tick, syncLimit)
		}
		o.timing, o.timingSet = session.Timing{Tick: tick, SyncLimit: syncLimit}, true
		return nil
	}
}

// WithLogger sets the structured logger for session transitions, failed
// connection attempts and lock loss. NewSession logs at WARN, through it,
// why it cannot connect a second after the first failed attempt, and then
// every 10 seconds while it keeps failing. The default passes warnings and
// errors to slog.Default() (looked up at each record) and discards the
// rest.
func WithLogger(l *slog.Logger) SessionOption {
	return func(o *sessionOptions) error {
		if l == nil {
			return invalid("nil logger")
		}
		o.logger = l
		return nil
	}
}

// WithACL sets the ACL of every node zklock creates through the session:
// lock, lease and candidate nodes and the CONTAINER parents of their paths,
// and of nodes Session.Client and zk.Client.Multi create without an ACL of
// their own. The default is zk.WorldACL(zk.PermAll). zk.AuthACL(zk.PermAll)
// makes them creator-only: only sessions authenticated as the same identity
// may read, change or delete them (see WithAuth). An ACL of scheme "auth"
// needs an authenticated session (WithAuth, or a client certificate with
// WithTLS); the
// server refuses creates with zk.ErrInvalidACL otherwise. An entry with an
// empty scheme is refused.
func WithACL(acl ...zk.ACL) SessionOption {
	return func(o *sessionOptions) error {
		if len(acl) == 0 {
			return invalid("empty ACL")
		}
		for _, a := range acl {
			if a.Scheme == "" {
				return invalid("ACL entry %+v without a scheme", a)
			}
		}
		o.acl = toClientACL(acl)
		return nil
	}
}

// WithAuth adds credentials, sent when the session is established and
// again after every reconnect, before any other request on the new
// connection. ZooKeeper's digest scheme takes "user:password":
//
//	zklock.WithAuth("digest", []byte("billing:"+password)),
//	zklock.WithACL(zk.AuthACL(zk.PermAll)...),
//
// authenticates as user billing, and WithACL makes every node zklock
// creates creator-only: only sessions authenticated as the same user may
// read, change or delete them, or create nodes under a lock path such a
// session created first. WithAuth alone leaves the default ACL,
// zk.WorldACL(zk.PermAll): anyone may delete a lock node. zk.DigestACL
// grants a named user instead. A digest credential without ':' or with an
// empty user is refused. The default is no authentication.
func WithAuth(scheme string, auth []byte) SessionOption {
	return func(o *sessionOptions) error {
		if scheme == "" {
			return invalid("empty auth scheme")
		}
		if scheme == "digest" {
			// The server takes what precedes the first ':' as the user and
			// would accept a credential without one, as an identity no
			// zk.DigestACL can name.
			if user, _, ok := bytes.Cut(auth, []byte(":")); !ok || len(user) == 0 {
				return invalid("digest credential: want \"user:password\" with a non-empty user")
			}
		}
		o.creds = append(o.creds, client.Credential{Scheme: scheme, Auth: append([]byte(nil), auth...)})
		return nil
	}
}

// WithDialer sets how connections to servers are made (for example through
// a SOCKS proxy): dial opens a connection to addr ("host:port", as given to
// WithServers, resolved by dial at each attempt) over network ("tcp"), and
// must return when ctx ends, which bounds each attempt (the session's
// handshake timeout) and ends at Close. The session's 'conf' and 'srvr'
// questions to the servers go through it too. WithTLS runs TLS over the
// connections it makes. The default is a net.Dialer's DialContext.
func WithDialer(d func(ctx context.Context, network, addr string) (net.Conn, error)) SessionOption {
	return func(o *sessionOptions) error {
		if d == nil {
			return invalid("nil dialer")
		}
		o.dialer = d
		return nil
	}
}

// WithRetry sets the backoff policy for retrying transient errors
// (connection loss, no server reachable, session moved). A fresh BackOff is
// made per operation; the caller's ctx bounds the total time. The default
// starts at 20ms and grows to 1s between attempts.
func WithRetry(newBackOff func() backoff.BackOff) SessionOption {
	return func(o *sessionOptions) error {
		if newBackOff == nil {
			return invalid("nil retry policy")
		}
		o.backoff = newBackOff
		return nil
	}
}

const (
	// defaultMaxRequestSize is ZooKeeper's default jute.maxbuffer: the
	// largest request, after its 4-byte length, a server accepts. A larger
	// one makes the server drop the connection, and every request in flight
	// on the session with it.
	defaultMaxRequestSize = 1<<20 - 1

	// maxSendSize bounds WithMaxRequestSize: zklock's client reads no
	// frame over 64 MiB (a corrupt length must not make it allocate
	// more), so a node it wrote larger could not be read back.
	maxSendSize = client.MaxMaxPacket
)

// WithMaxRequestSize sets the largest request, in bytes after its 4-byte
// length, that zklock sends: the servers' jute.maxbuffer. Primitives refuse
// in their constructor (and Election.Campaign for its value) a path or data
// that would make a create request larger, instead of sending it and losing
// the connection, and Session.Client's requests over it fail with
// zk.ErrRequestTooLarge, unsent. Set it to follow servers started with a larger
// jute.maxbuffer. It bounds what zklock reads too, as the client's
// jute.maxbuffer does in ZooKeeper's Java client: a reply longer than it
// plus 1 KiB is taken for a broken stream and the connection is left (a
// listing of a path with so many children fails on every connection). The
// default is ZooKeeper's default jute.maxbuffer, 1 MiB less 1 byte
// (1048575); at most 64 MiB less 4 bytes.
func WithMaxRequestSize(n int) SessionOption {
	return func(o *sessionOptions) error {
		if n < 1 || n > maxSendSize {
			return invalid("max request size %d must be from 1 to %d", n, maxSendSize)
		}
		o.maxReq = n
		return nil
	}
}

// createRequestSize is the size of a create request for a node path of
// pathLen bytes with dataLen bytes of data, as the server measures it
// against jute.maxbuffer: xid, opcode, path, data, ACL list, flags.
func (o *sessionOptions) createRequestSize(pathLen, dataLen int) int {
	n := 4 + 4 + 4 + pathLen + 4 + dataLen + 4 + 4
	for _, a := range o.acl {
		n += 4 + 4 + len(a.Scheme) + 4 + len(a.ID)
	}
	return n
}

// checkCreate refuses node paths and data that would make a create request
// larger than the server accepts.
func (o *sessionOptions) checkCreate(pathLen, dataLen int) error {
	if n := o.createRequestSize(pathLen, 0); n > o.maxReq {
		return fmt.Errorf("%w: a %d-byte node path makes a %d-byte create request, over the %d-byte limit "+
			"(the servers' jute.maxbuffer; see WithMaxRequestSize)", errs.ErrInvalidPath, pathLen, n, o.maxReq)
	}
	if n := o.createRequestSize(pathLen, dataLen); n > o.maxReq {
		return fmt.Errorf("%w: %d bytes of data with a %d-byte node path make a %d-byte create request, "+
			"over the %d-byte limit (the servers' jute.maxbuffer; see WithMaxRequestSize)",
			errs.ErrDataTooLarge, dataLen, pathLen, n, o.maxReq)
	}
	return nil
}

// toClientACL converts an ACL for the client.
func toClientACL(acl []zk.ACL) []client.ACL {
	out := make([]client.ACL, len(acl))
	for i, a := range acl {
		out[i] = client.ACL{Perms: a.Perms, Scheme: a.Scheme, ID: a.ID}
	}
	return out
}

// Option configures a lock, semaphore or election.
type Option func(*primitiveOptions) error

type primitiveOptions struct {
	data           []byte
	ownData        bool // data is WithData's, not the default
	listingHandoff bool
	cohort         *hold.Bound   // WithCohort
	revocable      bool          // WithRevocable
	onRevoke       func()        // WithRevocable's listener
	maxHold        time.Duration // WithMaxHold; 0: unbounded
	permits        bool          // WithPermitLayout
	seqLayout      bool          // WithSequenceLayout
}

func defaultPrimitiveOptions() primitiveOptions {
	return primitiveOptions{data: defaultData()}
}

// defaultData identifies the holder as "host:pid": one slice for every
// handle (a service may hold many), which nothing writes to.
var defaultData = sync.OnceValue(func() []byte {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	b := []byte(host + ":" + strconv.Itoa(os.Getpid()))
	return b[:len(b):len(b)] // an append copies
})

// WithData sets the data stored in our node, shown to other clients that
// inspect the queue (Contenders, LockedError). The default is "host:pid".
// Data larger than zk.MaxDataSize is rejected with ErrInvalidArgument. Data
// holding a NUL byte followed by "zklock:" is rejected with
// ErrInvalidArgument: zklock marks protocol state with tags that begin so (a node that announces its
// release, a revocable one, a semaphore permit's rank), and some nodes
// keep the caller's data verbatim (a cohort's; an election candidate's
// value), where such bytes would forge that state: a waiter would take a
// cohort's guard bump, or a revocation request, for a release.
func WithData(data []byte) Option {
	return func(o *primitiveOptions) error {
		if len(data) > zk.MaxDataSize {
			return fmt.Errorf("%w: %d bytes, at most %d", errs.ErrDataTooLarge, len(data), zk.MaxDataSize)
		}
		if queue.Reserved(data) {
			return invalid("data holds %q, which zklock reserves for its own tags", reservedData)
		}
		o.data, o.ownData = append([]byte(nil), data...), true
		return nil
	}
}

// reservedData is the byte sequence (a NUL byte, then "zklock:") that
// begins every tag zklock appends to a node's data. WithData and
// Election.Campaign refuse data that holds it.
const reservedData = queue.TagPrefix

// WithListingHandoff turns off the listing-free handoff for this handle:
// a waiter woken by the contender ahead of it lists the queue again before
// it holds, as Curator, Kazoo and go-zookeeper's zk.Lock do, and a release
// is a plain delete.
//
// By default an exclusive holder (Mutex, ReentrantMutex, an RWMutex writer)
// that had to wait releases with one multi that sets its node's data and
// deletes it (one granted at once deletes it plainly: the waiter behind it
// saw it as the only contender ahead, and holds at its deletion anyway),
// and says so in its node's data, which ends with a tag (a NUL byte and
// "zklock:a") that Contenders and LockedError strip. The waiter behind it
// sees the data change and holds without listing the queue: a handoff is
// one write and one notification, whatever the queue's length. A data
// change proves nothing on a node without the tag (Curator's and Kazoo's,
// an Election candidate's, a cohort's: see WithCohort), so a waiter behind
// one lists. On a tagged node it proves a release only while nothing else
// writes that node's data. Give this option to every zklock handle on a
// path where something might: Curator's Revoker.attemptRevoke aimed at a
// zklock node (its revocation request is a data write on a holder's or a
// waiter's node), or writes through Session.Client. Without it, such a
// write to the node ahead of a zklock waiter lets the waiter hold while
// that node may still hold. Deletions are safe either way: a waiter never
// takes a plain deletion for a release unless its listing showed the
// deleted node was the only one ahead of it that could block it.
func WithListingHandoff() Option {
	return func(o *primitiveOptions) error {
		o.listingHandoff = true
		return nil
	}
}

// WithSequenceLayout gives a Mutex zklock's sequence layout instead of
// Apache Curator's InterProcessMutex layout, which is the default. Each
// contender is an ephemeral sequential node named
// "<czxid>-seqlock-<seq>" directly under the lock path, where czxid is
// the lock path's own (in hex), without Curator's random "_c_<uuid>-"
// prefix, so a waiter finds the node ahead of its own by asking whether
// the nodes just below its sequence number exist (one pipeline of exists
// requests), where the default layout lists the whole queue on every
// enqueue: in a long queue that listing is what each acquisition costs the
// server most. A queue of at most 16 nodes is still listed, as cheap as
// the walk, and costs what it costs in the default layout once a handle
// has seen it.
//
// Every guarantee of the default layout holds: FIFO order, the loss signal
// before the server can hand the lock on, fencing tokens, the handoff
// without a listing, cancellation leaving nothing, a create cut off by
// connection loss resolved (by a random token in the node's data, since
// no part of the name is the contender's own). Lock and Unlock cost the
// requests they cost there; a Session's first Lock on a path, and its
// first after the path was reaped and re-created, reads the path's czxid
// first (one read for all its handles), one request more. Sequence
// numbers restart at 0 when the lock path, a CONTAINER, is reaped once
// empty and re-created, and the czxid in the names is what keeps a node of
// the path's new life from being named like one of its earlier life:
// Unlock deletes by name, without a read. A node may still be, for as
// long as its maker has not read its create's reply (up to its Session's
// timeout if that maker is cut off): made by a handle whose Session took
// the path's earlier czxid for current, which deletes it once it reads
// the reply, and which no waiter counts as a contender. So there is no
// Guard (Mutex.Guard is nil, which Multi refuses): fence with Token. An
// Unlock whose node is gone (a Break, of which the holder is not told)
// returns ErrLockLost, with nothing deleted, but in two cases, which
// return nil: it meets such a node, which it deletes; or its reply was
// lost and the retry found no node (the first try may have deleted it).
// The layouts cannot share a path: a contender of either that
// finds the other's nodes ahead of it fails with a *WrongKindError, and
// so does any other kind of primitive on the path. Curator and Kazoo
// processes cannot use this layout, and must not use its path: they do
// not look for its nodes. Nor can zklock releases from before the czxid
// was in the names (unreleased builds).
//
// It applies to NewMutex only, without WithCohort, WithRevocable,
// WithMaxHold or WithListingHandoff; other uses are refused with
// ErrInvalidArgument.
//
// Unreleased: added after v0.1.0 (see CHANGELOG.md).
func WithSequenceLayout() Option {
	return func(o *primitiveOptions) error {
		o.seqLayout = true
		return nil
	}
}

// WithPermitLayout gives a Semaphore zklock's permit layout instead of
// Curator's InterProcessSemaphoreV2 layout, which is the default. Each
// acquisition of n leases is one ephemeral sequential node directly under
// the semaphore's path, named "_c_<uuid>-<n>of<limit>permit-<seq>", which
// holds once the leases of the nodes ahead of it plus its own n are at most
// the limit. Every waiter watches one node, the nearest ahead; there is no
// guard mutex, and a lease is handed on without a listing: a holder writes
// its rank (the leases at and ahead of it) into its node's data when it
// drops below the limit, which lets in the client behind it (see
// docs/recipes.md for the request counts).
//
// Every guarantee of the default layout holds: all-or-nothing Acquire(n),
// FIFO order, the loss signal before the server can hand a lease on,
// fencing tokens, cancellation leaving nothing. The limit is carried in
// every node's name, so each acquisition's first listing checks it against
// every other client's, at no extra request (ErrInvalidArgument). The two
// layouts cannot share a path: an acquisition that finds the other
// layout's nodes fails with a *WrongKindError, in either direction, and so
// does any other kind of primitive on the path. Curator processes cannot
// use this layout. A holder with nodes ahead of it keeps a watch, and a
// goroutine, on the nearest one until those ahead have left, to pass on
// what it sees to the client behind it. The data a lease was acquired with
// is followed by that rank on the server (Contenders strips it).
//
// It applies to NewSemaphore only; other constructors refuse it with
// ErrInvalidArgument.
func WithPermitLayout() Option {
	return func(o *primitiveOptions) error {
		o.permits = true
		return nil
	}
}

func applyOptions(opts []Option) (primitiveOptions, error) {
	o := defaultPrimitiveOptions()
	for _, opt := range opts {
		if opt == nil {
			return o, invalid("nil option")
		}
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}
