package zktest

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Defaults of a managed cluster. They are chosen so that fault tests
// (session expiry, leader loss) finish in seconds rather than minutes.
const (
	// DefaultTickTime is ZooKeeper's tickTime unless WithTickTime says otherwise.
	DefaultTickTime = 100 * time.Millisecond
	// DefaultContainerCheckInterval is how often the server looks for empty
	// CONTAINER nodes to delete, unless WithContainerCheckInterval says otherwise.
	DefaultContainerCheckInterval = time.Second
	// DefaultStartTimeout bounds how long one server may take to start.
	DefaultStartTimeout = 90 * time.Second
)

// Ensemble timing in ticks. A follower that hears nothing from its leader for
// syncLimit ticks drops out and starts an election, so a paused leader is
// replaced after about syncLimit*tickTime. Both are generous enough for a
// loaded two-core machine, where a JVM can stall for a few hundred ms.
const (
	initLimitTicks = 50
	// DefaultSyncLimit is ZooKeeper's syncLimit, in ticks, unless
	// WithSyncLimit says otherwise.
	DefaultSyncLimit = 15
)

// Option configures a Cluster started by Start or StartEnsemble.
type Option func(*options)

type options struct {
	tickTime          time.Duration
	minSession        time.Duration
	maxSession        time.Duration
	containerInterval time.Duration
	startTimeout      time.Duration
	jvmFlags          []string
	tls               bool     // WithSelfSignedTLS
	peerNet           bool     // WithPeerNetwork
	keepDir           string   // WithKeepOnFailure
	fsync             bool     // WithFsync
	syncLimit         int      // in ticks
	fourLetterWords   string   // 4lw.commands.whitelist
	cds               []string // the JVM flags of the class data archive, see cdsFlags
	cdsDump           string   // where the JVM writes a class data archive as it exits, see makeCDS
}

// WithTickTime sets ZooKeeper's tickTime, the unit of all its timeouts.
// The default is DefaultTickTime (100ms). It must be at least 10ms.
func WithTickTime(d time.Duration) Option {
	return func(o *options) { o.tickTime = d }
}

// WithSyncLimit sets an ensemble's syncLimit, in ticks: how long a
// follower goes on serving its clients after it last heard from its leader,
// and how long a leader waits for a follower's acknowledgements. Clients on
// a follower cut off from its leader are answered for up to
// syncLimit*tickTime, which zklock's ownership deadline must allow for
// (see zklock.WithEnsembleTiming). The default is DefaultSyncLimit (15).
// It must be at least 1; a standalone server ignores it.
func WithSyncLimit(ticks int) Option {
	return func(o *options) { o.syncLimit = ticks }
}

// WithSessionTimeouts sets the server's minSessionTimeout and
// maxSessionTimeout: a client's requested session timeout is clamped into
// [min, max]. The default is ZooKeeper's own, 2 and 20 ticks (200ms and 2s
// with the default tick), except that an ensemble's maximum is at least
// 4 syncLimits (6s with the defaults): a zklock session on a follower must
// be longer than syncLimit*tickTime plus a tick and a half and its margin. min must be at least two ticks
// (ZooKeeper enforces this) and max must not be smaller than min.
func WithSessionTimeouts(min, max time.Duration) Option {
	return func(o *options) { o.minSession, o.maxSession = min, max }
}

// WithFourLetterWords sets the servers' 4lw.commands.whitelist: the
// four-letter words they answer on the client port. The default is every
// one ("*"). WithFourLetterWords("srvr") is a stock ZooKeeper's since 3.5.3,
// which answers 'srvr' alone and refuses 'conf', 'ruok', 'mntr', 'cons' and
// 'dump' (zktest then waits for the servers by 'srvr', and the methods that
// need another word fail). ZooKeeper answers 'srvr' whatever the list says.
func WithFourLetterWords(cmds ...string) Option {
	return func(o *options) { o.fourLetterWords = strings.Join(cmds, ",") }
}

// WithContainerCheckInterval sets how often the server deletes empty
// CONTAINER nodes (the JVM property znode.container.checkIntervalMs; in
// zoo.cfg it has no effect). The default is DefaultContainerCheckInterval
// (1s); ZooKeeper's own default is one minute.
func WithContainerCheckInterval(d time.Duration) Option {
	return func(o *options) { o.containerInterval = d }
}

// WithJVMFlags appends flags to the java command line of every server, after
// zktest's own, so they can override them (for example "-Xmx512m").
// Ignored for Docker and external clusters.
func WithJVMFlags(flags ...string) Option {
	return func(o *options) { o.jvmFlags = append(o.jvmFlags, flags...) }
}

// WithStartTimeout bounds how long each server may take to start and join its
// ensemble, at first start and in Server.Start. The default is
// DefaultStartTimeout (90s), which is generous on purpose: a cold JVM on a
// busy two-core machine can take many seconds.
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) { o.startTimeout = d }
}

// buildOptions applies opts over the defaults and rejects bad values.
func buildOptions(opts []Option) (options, error) {
	return buildOptionsFor(1, opts)
}

// buildOptionsFor is buildOptions for a cluster of n servers.
func buildOptionsFor(n int, opts []Option) (options, error) {
	o := options{
		tickTime:          DefaultTickTime,
		containerInterval: DefaultContainerCheckInterval,
		startTimeout:      DefaultStartTimeout,
		syncLimit:         DefaultSyncLimit,
		fourLetterWords:   "*",
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.minSession == 0 && o.maxSession == 0 {
		o.minSession, o.maxSession = 2*o.tickTime, 20*o.tickTime
		if n > 1 {
			// A client on a follower needs a session longer than
			// syncLimit ticks and more (see WithSyncLimit).
			o.maxSession = max(o.maxSession, time.Duration(4*o.syncLimit)*o.tickTime)
		}
	}
	return o, o.validate()
}

// validate rejects values ZooKeeper (or zktest) would not run with.
func (o options) validate() error {
	if o.syncLimit < 1 {
		return fmt.Errorf("zktest: sync limit %d is below one tick", o.syncLimit)
	}
	if o.tickTime < 10*time.Millisecond {
		return fmt.Errorf("zktest: tick time %v is below 10ms", o.tickTime)
	}
	if o.minSession < 2*o.tickTime || o.maxSession < o.minSession {
		return fmt.Errorf("zktest: session timeouts [%v, %v] invalid: need 2 ticks (%v) <= min <= max",
			o.minSession, o.maxSession, 2*o.tickTime)
	}
	if o.containerInterval < time.Millisecond {
		return errors.New("zktest: container check interval must be at least 1ms")
	}
	if o.startTimeout <= 0 {
		return errors.New("zktest: start timeout must be positive")
	}
	return nil
}

// WithFsync makes the servers fsync their transaction log before they
// acknowledge a transaction, as ZooKeeper does by default (forceSync=yes).
// The default is not to (forceSync=no): tests run faster and lose nothing
// to a killed server, only to a machine crash. ZooKeeper 3.8.0 can lose a
// committed transaction when a leader is re-elected while a follower syncs
// from it (ZOOKEEPER-4685, 4712, 4643); without fsync the race that starts
// it is much more likely, so long fault runs that judge a client library
// rather than the servers use WithFsync (docs/chaos.md). It applies to
// local installations only (not ZKTEST_SERVERS or Docker).
func WithFsync() Option {
	return func(o *options) { o.fsync = true }
}

// WithKeepOnFailure copies each server's directory (its zoo.cfg, its log,
// and its data: snapshots and transaction logs) into dir/server<N> when the
// test has failed, before the directories are removed, so that what the
// servers wrote down can be inspected after the run. dir is created if
// needed; a directory already there for a server is an error reported on
// the test. The default is to keep nothing. It applies to local
// installations only (not ZKTEST_SERVERS or Docker).
func WithKeepOnFailure(dir string) Option {
	return func(o *options) { o.keepDir = dir }
}
