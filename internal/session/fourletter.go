package session

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// fourLetter sends a four-letter word (ZooKeeper's admin commands on the
// client port) to addr through the session's dialer, over TLS when the
// session uses it, and returns the answer. It takes at most the handshake
// timeout.
func (c *Conn) fourLetter(ctx context.Context, addr, cmd string) (string, error) {
	d := HandshakeTimeout(c.cfg.Timeout, len(c.cfg.Servers))
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	dial := c.cfg.Dialer
	if dial == nil {
		var nd net.Dialer
		dial = nd.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	if c.cfg.TLS != nil {
		if nc, err = c.handshakeTLS(ctx, nc, addr); err != nil {
			return "", err
		}
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	if _, err := io.WriteString(nc, cmd); err != nil {
		return "", err
	}
	out, err := io.ReadAll(io.LimitReader(nc, 1<<16))
	if ctx.Err() != nil {
		return "", fmt.Errorf("zklock: %s to %s: %w", cmd, addr, ctx.Err())
	}
	return string(out), err
}

// handshakeTLS runs the TLS client handshake on nc within ctx; on failure
// nc is closed.
func (c *Conn) handshakeTLS(ctx context.Context, nc net.Conn, addr string) (net.Conn, error) {
	cfg := c.cfg.TLS
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("zklock: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// notAllowed reports an answer saying the command is not in the server's
// 4lw.commands.whitelist, or that the server does not serve yet.
func notAllowed(out string) bool {
	return strings.Contains(out, "not in the whitelist") || strings.Contains(out, "not currently serving")
}

// serverConf is what a server's 'conf' says about where session expiry
// lives. quorum is false for an answer shaped like a standalone server's
// (no quorum lines), which is believed only when the server's 'srvr' says
// standalone (settleConf).
type serverConf struct {
	tick             time.Duration
	syncLimit        int
	minSess, maxSess time.Duration
	quorum           bool
}

// quorumKeys are the lines ZooKeeper (3.5 to 3.9) prints in an ensemble
// member's 'conf' after the lines every server prints
// (QuorumZooKeeperServer.dumpConf), in order; "membership:" is followed by
// one line per server and, last, "version=".
var quorumKeys = []string{"initLimit", "syncLimit", "electionAlg", "electionPort", "quorumPort", "peerType", "membership:", "version"}

// parseConf reads the lines of a 'conf' answer; ok is false when it is not
// a whole one: refused, not serving, or cut short. An answer cut cleanly
// between lines reads like a shorter, valid one (cut before "initLimit=",
// a follower's reads like a standalone server's), so an answer is taken
// only with every line its kind always prints: up to "serverId=" and its
// line end for a standalone server; all of quorumKeys, "version=" after
// "membership:", for an ensemble member.
func parseConf(out string) (sc serverConf, ok bool) {
	kv := make(map[string]string)
	afterMembership := false
	sc2 := bufio.NewScanner(strings.NewReader(out))
	for sc2.Scan() {
		line := sc2.Text()
		if strings.HasPrefix(line, "membership:") {
			kv["membership:"], afterMembership = "", true
			continue
		}
		if k, v, found := strings.Cut(line, "="); found {
			k = strings.TrimSpace(k)
			if k == "version" && !afterMembership {
				continue
			}
			kv[k] = strings.TrimSpace(v)
		}
	}
	ms := func(k string) (time.Duration, bool) {
		n, err := strconv.Atoi(kv[k])
		return time.Duration(n) * time.Millisecond, err == nil && n > 0
	}
	var ok1, ok2, ok3 bool
	sc.tick, ok1 = ms("tickTime")
	sc.minSess, ok2 = ms("minSessionTimeout")
	sc.maxSess, ok3 = ms("maxSessionTimeout")
	if _, found := kv["serverId"]; !ok1 || !ok2 || !ok3 || !found {
		return serverConf{}, false
	}
	some, all := false, true
	for _, k := range quorumKeys {
		_, found := kv[k]
		some, all = some || found, all && found
	}
	switch {
	case !some:
		// A standalone server's last line is serverId's, ended.
		return sc, strings.HasSuffix(out, "\n")
	case !all:
		return serverConf{}, false
	}
	n, err := strconv.Atoi(kv["syncLimit"])
	if err != nil || n < 0 {
		return serverConf{}, false
	}
	sc.syncLimit, sc.quorum = n, true
	return sc, true
}

// parseMode returns the "Mode:" of a 'srvr' answer (leader, follower,
// observer, standalone, read-only), or "" when there is none.
func parseMode(out string) string {
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(line, "Mode:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// parseVersion returns the version in srvr's output ("Zookeeper version:
// 3.8.0-5a02a05e..., built on ..."), or "".
func parseVersion(out string) string {
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(line, "Zookeeper version:"); ok {
			v, _, _ = strings.Cut(strings.TrimSpace(v), ",")
			return v
		}
	}
	return ""
}

// versionAtLeast reports whether v (as parseVersion returns it) is at
// least major.minor; false when v cannot be read.
func versionAtLeast(v string, major, minor int) bool {
	v, _, _ = strings.Cut(v, "-")
	f := strings.Split(v, ".")
	if len(f) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}
