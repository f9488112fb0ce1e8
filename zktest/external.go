package zktest

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvServers names the environment variable that points zktest at running
// servers instead of starting its own: a comma-separated list of host:port.
// It is zktest's own, not an application's ZK_SERVERS, so that a program's
// tests never run against the servers the program itself is pointed at.
const EnvServers = "ZKTEST_SERVERS"

// externalReadyTimeout bounds the first check that external servers serve.
const externalReadyTimeout = 30 * time.Second

// startExternal returns a Cluster over the servers listed in env.
func startExternal(t testing.TB, n int, o options, env string) *Cluster {
	t.Helper()
	var addrs []string
	for _, a := range strings.Split(env, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			t.Fatalf("zktest: %s=%q: %q is not host:port: %v", EnvServers, env, a, err)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		t.Fatalf("zktest: %s=%q lists no server", EnvServers, env)
	}
	if n > 1 && len(addrs) != n {
		t.Fatalf("zktest: the test needs an ensemble of %d but %s lists %d server(s); "+
			"unset %s to let zktest start one", n, EnvServers, len(addrs), EnvServers)
	}
	c := &Cluster{t: t, opts: o, external: true, source: EnvServers}
	for i, a := range addrs {
		c.servers = append(c.servers, &Server{c: c, index: i, addr: a, ctl: external{}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), externalReadyTimeout)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("zktest: servers from %s=%q are not serving: %v", EnvServers, env, err)
	}
	c.readExternalConf(ctx)
	return c
}

// readExternalConf replaces the timing options with the server's own, read
// with 'conf'; if 'conf' is not whitelisted, ZooKeeper's defaults are assumed.
func (c *Cluster) readExternalConf(ctx context.Context) {
	out, err := c.FourLetter(ctx, 0, "conf")
	conf := map[string]string{}
	if err == nil {
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				conf[k] = strings.TrimSpace(v)
			}
		}
	}
	ms := func(key string, def time.Duration) time.Duration {
		if v, err := strconv.ParseInt(conf[key], 10, 64); err == nil && v > 0 {
			return time.Duration(v) * time.Millisecond
		}
		return def
	}
	c.opts.tickTime = ms("tickTime", 2*time.Second)
	c.opts.minSession = ms("minSessionTimeout", 2*c.opts.tickTime)
	c.opts.maxSession = ms("maxSessionTimeout", 20*c.opts.tickTime)
	if _, ok := conf["tickTime"]; !ok {
		c.t.Logf("zktest: 'conf' unavailable on %s (%v); assuming tickTime %v", c.servers[0].addr, err, c.opts.tickTime)
	}
}

// external is the control of a server zktest does not run.
type external struct{}

var _ control = external{}

func (external) launch() error          { return ErrUnmanaged }
func (external) stop() error            { return ErrUnmanaged }
func (external) kill() error            { return ErrUnmanaged }
func (external) teardown() error        { return nil }
func (external) pause() error           { return ErrUnmanaged }
func (external) resume() error          { return ErrUnmanaged }
func (external) running() bool          { return true }
func (external) exited() (bool, string) { return false, "" }
func (external) keep(string) error      { return nil }

func (external) logTail(lines int) string {
	return "(external server: its log is not available to zktest)"
}
