package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Fault kinds.
const (
	FaultLeaderKill      = "leader-kill"      // SIGKILL the leader, restart it
	FaultFollowerKill    = "follower-kill"    // SIGKILL a follower, restart it
	FaultEnsembleRestart = "ensemble-restart" // stop every server, start them again
	FaultPartition       = "client-partition" // blackhole a client past its session timeout
	FaultReset           = "client-reset"     // reset a client's connections
	FaultLatency         = "client-latency"   // delay a client's traffic
	FaultPause           = "client-pause"     // SIGSTOP a client past its session timeout
	FaultClientKill      = "client-kill"      // SIGKILL a client, start a new one

	// Faults between the servers (zktest.WithPeerNetwork); clients keep
	// their connections to every server.
	FaultLeaderIsolated = "leader-isolated" // the leader cut from both followers
	FaultPeerSplit      = "peer-split"      // a follower cut from the other two (1|2)
	FaultPeerOneWay     = "peer-one-way"    // leader to follower or back, one direction cut
	FaultPeerLatency    = "peer-latency"    // delay between the leader and its followers

	// A client that reaches only a follower, that follower cut from the
	// other two: it answers the client for syncLimit*tickTime, and the
	// leader expires the client's session a timeout after the last touch
	// the follower passed on (issue 32).
	FaultFollowerCut = "follower-cut"

	// A rolling restart of every server with a new zoo.cfg: a syncLimit
	// drawn up to the most the clients were told (Config.Stock) and a
	// maxSessionTimeout below or above the clients' session timeout, while
	// holds are live. Not among FaultKinds: TestChaosStock draws it.
	FaultConfigRoll = "config-roll"
)

// ReportKinds lists every kind the report shows: FaultKinds and those
// only some slices draw.
var ReportKinds = append(slices.Clone(FaultKinds), FaultConfigRoll)

// FaultKinds lists every kind the scheduler injects.
var FaultKinds = []string{FaultLeaderKill, FaultFollowerKill, FaultEnsembleRestart, FaultPartition,
	FaultReset, FaultLatency, FaultPause, FaultClientKill,
	FaultLeaderIsolated, FaultPeerSplit, FaultPeerOneWay, FaultPeerLatency, FaultFollowerCut}

// Fault is one injected fault: active from Start until End, when it was
// undone (server serving again, client healed, resumed or restarted).
type Fault struct {
	Kind   string `json:"kind"`
	Target string `json:"target"` // "server 2" or a worker incarnation
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	Detail string `json:"detail,omitempty"`
	Err    string `json:"err,omitempty"`
}

// injector does faults to a cluster and the workers.
type injector struct {
	cluster *zktest.Cluster
	procs   *procs
	workers []*worker
	admin   *zklock.Session
	paths   Paths
	rnd     *rand.Rand
	keep    int       // workers 1..keep are not killed
	victims []*worker // Config.Victims: client faults hit them in turn
	turn    int
	session time.Duration // the clients' session timeout
	// The servers' syncLimit at the start, and the most a config-roll sets.
	syncLimit, maxSyncLimit int
}

// between returns a random duration in [lo, hi).
func (in *injector) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(in.rnd.Int64N(int64(hi-lo)))
}

// do injects one fault of kind, keeps it for a while, undoes it and
// returns its record. Start is taken just before the fault is done, after
// choosing its target: the checker relies on it to tell when a process was
// frozen.
func (in *injector) do(ctx context.Context, kind string) Fault {
	f := Fault{Kind: kind}
	var err error
	switch kind {
	case FaultLeaderKill, FaultFollowerKill:
		f.Target, err = in.serverKill(ctx, kind == FaultLeaderKill, &f.Start)
	case FaultEnsembleRestart:
		f.Target, f.Start = "all servers", Now()
		err = in.ensembleRestart(ctx)
	case FaultLeaderIsolated, FaultPeerSplit, FaultPeerOneWay, FaultPeerLatency:
		f.Target, f.Detail, err = in.peer(ctx, kind, &f.Start)
	case FaultFollowerCut:
		f.Target, f.Detail, err = in.followerCut(ctx, in.victim(ctx), &f.Start)
	case FaultConfigRoll:
		f.Target, f.Start = "all servers", Now()
		f.Detail, err = in.configRoll(ctx)
	default:
		w := in.victim(ctx)
		if len(in.victims) > 0 {
			w = in.victims[in.turn%len(in.victims)]
			in.turn++
			in.aim(ctx, w)
		}
		if kind == FaultClientKill && w.lib == "" && w.id <= in.keep {
			w = in.workers[in.keep+in.rnd.IntN(len(in.workers)-in.keep)]
		}
		f.Target, f.Start = w.proc(), Now()
		f.Detail, err = in.client(ctx, kind, w)
	}
	f.End = Now()
	if err != nil {
		f.Err = err.Error()
	}
	return f
}

func (in *injector) serverKill(ctx context.Context, leader bool, start *int64) (string, error) {
	*start = Now()
	l, err := in.cluster.Leader(ctx)
	if err != nil {
		return "", err
	}
	i := l
	if !leader {
		i = (l + 1 + in.rnd.IntN(in.cluster.Len()-1)) % in.cluster.Len()
	}
	target := fmt.Sprintf("server %d", i)
	*start = Now()
	if err := in.cluster.Server(i).Kill(); err != nil {
		return target, err
	}
	sleep(ctx, in.between(300*time.Millisecond, 2*time.Second))
	if err := in.cluster.Server(i).Start(); err != nil {
		return target, err
	}
	return target, in.cluster.WaitReady(ctx)
}

func (in *injector) ensembleRestart(ctx context.Context) error {
	for i := 0; i < in.cluster.Len(); i++ {
		if err := in.cluster.Server(i).Stop(); err != nil {
			return err
		}
	}
	sleep(ctx, in.between(200*time.Millisecond, 2*time.Second))
	errs := make(chan error, in.cluster.Len())
	for i := 0; i < in.cluster.Len(); i++ {
		go func() { errs <- in.cluster.Server(i).Start() }()
	}
	for i := 0; i < in.cluster.Len(); i++ {
		if err := <-errs; err != nil {
			return err
		}
	}
	return in.cluster.WaitReady(ctx)
}

// peer cuts the servers apart (or slows them) for one to six seconds, past
// syncLimit (1.5s) in most draws and past the session timeout in some, then
// heals and waits for the ensemble to serve.
func (in *injector) peer(ctx context.Context, kind string, start *int64) (target, detail string, err error) {
	*start = Now()
	l, err := in.cluster.Leader(ctx)
	if err != nil {
		return "", "", err
	}
	n := in.cluster.Len()
	f := (l + 1 + in.rnd.IntN(n-1)) % n
	d := in.between(time.Second, 6*time.Second)
	*start = Now()
	switch kind {
	case FaultLeaderIsolated:
		target = fmt.Sprintf("server %d (leader)", l)
		err = in.cluster.Isolate(l)
	case FaultPeerSplit:
		target = fmt.Sprintf("server %d (follower)", f)
		err = in.cluster.Isolate(f)
	case FaultPeerOneWay:
		from, to := l, f
		if in.rnd.IntN(2) == 0 {
			from, to = f, l
		}
		target = fmt.Sprintf("server %d -> server %d", from, to)
		err = in.cluster.CutOneWay(from, to)
	case FaultPeerLatency:
		lat := in.between(20*time.Millisecond, 400*time.Millisecond)
		target, detail = fmt.Sprintf("server %d (leader)", l), fmt.Sprintf("%v each way, ", lat)
		for i := range n {
			if i != l && err == nil {
				err = in.cluster.SetPeerLatency(l, i, lat)
			}
		}
	}
	detail += "for " + d.String()
	if err == nil {
		sleep(ctx, d)
	}
	if herr := in.cluster.HealNetwork(); err == nil {
		err = herr
	}
	if err != nil {
		return target, detail, err
	}
	return target, detail, in.cluster.WaitReady(ctx)
}

// followerCut makes w reach only a follower, then cuts that follower from
// its peers for one second to past the session timeout: in most draws
// past syncLimit*tickTime, when the follower stops serving and w, which
// can reach no other server, loses its session unless the cut ends first.
func (in *injector) followerCut(ctx context.Context, w *worker, start *int64) (target, detail string, err error) {
	*start = Now()
	l, err := in.cluster.Leader(ctx)
	if err != nil {
		return "", "", err
	}
	n := in.cluster.Len()
	f := (l + 1 + in.rnd.IntN(n-1)) % n
	d := in.between(time.Second, in.past())
	target, detail = fmt.Sprintf("%s on server %d (follower)", w.proc(), f), "for "+d.String()
	*start = Now()
	w.proxy.Only(f)
	if err = in.cluster.Isolate(f); err == nil {
		sleep(ctx, d)
	}
	if herr := in.cluster.HealNetwork(); err == nil {
		err = herr
	}
	w.proxy.Heal()
	if err != nil {
		return target, detail, err
	}
	return target, detail, in.cluster.WaitReady(ctx)
}

// configRoll restarts the servers one after another, each with a syncLimit
// drawn from [syncLimit, maxSyncLimit] and a maxSessionTimeout half a
// second below the clients' session timeout or twice it: the rolling
// restart an operator does to change zoo.cfg, with holds live.
func (in *injector) configRoll(ctx context.Context) (string, error) {
	n := in.cluster.Len()
	order := in.rnd.Perm(n)
	var detail []string
	for _, i := range order {
		limit := in.syncLimit + in.rnd.IntN(in.maxSyncLimit-in.syncLimit+1)
		maxSess := 2 * in.session
		if in.rnd.IntN(2) == 0 {
			maxSess = in.session - 500*time.Millisecond
		}
		detail = append(detail, fmt.Sprintf("server %d syncLimit %d maxSession %v", i, limit, maxSess))
		if err := in.cluster.Server(i).Restart(zktest.WithSyncLimit(limit),
			zktest.WithSessionTimeouts(in.cluster.MinSessionTimeout(), maxSess)); err != nil {
			return strings.Join(detail, ", "), err
		}
		if err := in.cluster.WaitReady(ctx); err != nil {
			return strings.Join(detail, ", "), err
		}
	}
	return strings.Join(detail, ", "), nil
}

// past is longer than the session timeout: the server expires the session.
func (in *injector) past() time.Duration {
	return in.session + in.between(time.Second, 2500*time.Millisecond)
}

func (in *injector) client(ctx context.Context, kind string, w *worker) (string, error) {
	switch kind {
	case FaultPartition:
		d := in.past()
		w.proxy.Blackhole()
		sleep(ctx, d)
		w.proxy.Heal()
		return d.String(), nil
	case FaultReset:
		w.proxy.Reset()
		return "", nil
	case FaultLatency:
		lat, d := in.between(20*time.Millisecond, 300*time.Millisecond), in.between(time.Second, 4*time.Second)
		w.proxy.SetLatency(lat)
		sleep(ctx, d)
		w.proxy.Heal()
		return fmt.Sprintf("%v each way for %v", lat, d), nil
	case FaultPause:
		d := in.past()
		if err := in.procs.signal(w, syscall.SIGSTOP); err != nil {
			return "", err
		}
		sleep(ctx, d)
		return d.String(), in.procs.signal(w, syscall.SIGCONT)
	case FaultClientKill:
		in.procs.kill(w, "")
		sleep(ctx, in.between(0, time.Second))
		return "", in.procs.start(w)
	}
	return "", fmt.Errorf("chaos: unknown fault %q", kind)
}
