package zktest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SessionAlive reports whether the server still knows session sessionID
// (as a client reports it: zk.Client.SessionID). It reads 'dump' on the
// leader, which owns session expiry: its SessionTracker section lists every
// live session id in hex (0x1000012abcd0000), with or without ephemeral
// nodes; a session is alive while it is listed there or still owns
// ephemeral nodes. It returns ErrNoSessionDump (wrapped) when 'dump' is not
// whitelisted or lists no sessions in a known format.
//
// One dump can miss a live session: the leader files sessions in buckets by
// expiry time and moves a session to a later bucket each time the client is
// heard from, adding it to the new bucket before removing it from the old,
// while 'dump' lists the buckets that existed when it began; a session moved
// into a bucket created during the dump shows in neither. So a session
// missing from a dump is looked for in a second one, a tick later, before
// it is reported gone (this made TestEnsembleLeaderFailover fail about once
// in 20 runs on a loaded machine).
func (c *Cluster) SessionAlive(ctx context.Context, sessionID int64) (bool, error) {
	for attempt := 0; ; attempt++ {
		leader, out, err := c.leaderDump(ctx)
		if err != nil {
			return false, err
		}
		sessions, ok := dumpSessions(out)
		if !ok {
			return false, fmt.Errorf("%w: server %d answered %q", ErrNoSessionDump, leader, firstLine(out))
		}
		if sessions[sessionID] || attempt == 1 {
			return sessions[sessionID], nil
		}
		if err := sleepCtx(ctx, max(c.opts.tickTime, 50*time.Millisecond)); err != nil {
			return false, err
		}
	}
}

// WaitSessionExpired waits until the leader no longer lists sessionID,
// polling every tick (at least 50ms). Besides ctx it is bounded by
// ExpiryBound; polls that fail while an election is under way are retried.
func (c *Cluster) WaitSessionExpired(ctx context.Context, sessionID int64) error {
	ctx, cancel := boundedCtx(ctx, c.ExpiryBound())
	defer cancel()
	every := max(c.opts.tickTime, 50*time.Millisecond)
	var last error
	for {
		alive, err := c.SessionAlive(ctx, sessionID)
		switch {
		case errors.Is(err, ErrNoSessionDump):
			return err
		case err == nil && !alive:
			return nil
		case err == nil:
			last = fmt.Errorf("session 0x%x is still listed", uint64(sessionID))
		default:
			last = err
		}
		if err := sleepCtx(ctx, every); err != nil {
			return fmt.Errorf("zktest: wait for session 0x%x to expire (%v): %w", uint64(sessionID), last, err)
		}
	}
}

// ExpiryBound is how long a session whose client has gone silent can take to
// be expired by the server, with room for a loaded machine: the server
// expires it within MaxSessionTimeout plus one tick (sessions are expired in
// tick-sized buckets), and an ensemble may need an election first.
func (c *Cluster) ExpiryBound() time.Duration {
	return 2*c.opts.maxSession + 20*c.opts.tickTime + 10*time.Second
}

// dumpSessions returns the session ids listed by a 'dump' reply, and false if
// the reply has no session tracker section in a known format. The leader
// lists "Session Sets" (expiry buckets of ids); followers list
// "Global Sessions" (id, tab, timeout).
func dumpSessions(out string) (map[int64]bool, bool) {
	_, rest, ok := strings.Cut(out, "SessionTracker dump:")
	if !ok || !(strings.Contains(rest, "Session Sets") || strings.Contains(rest, "Global Sessions")) {
		return nil, false
	}
	// Connections also name session ids; a blackholed client's connection
	// may outlive its session, so that section must not count.
	rest, _, _ = strings.Cut(rest, "Connections dump:")
	ids := make(map[int64]bool)
	for _, line := range strings.Split(rest, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "0x") {
			continue
		}
		hex := strings.TrimSuffix(strings.TrimPrefix(f[0], "0x"), ":")
		if id, err := strconv.ParseUint(hex, 16, 64); err == nil {
			ids[int64(id)] = true
		}
	}
	return ids, true
}

// Ephemerals returns the ephemeral nodes the leader knows, by owning session
// id (as a client reports it: zk.Client.SessionID). It reads the leader's
// 'dump', which lists every live session's ephemeral nodes; tests use it to
// check that nothing was left behind. It returns ErrNoSessionDump (wrapped)
// when 'dump' is not whitelisted or lists no ephemerals in a known format.
func (c *Cluster) Ephemerals(ctx context.Context) (map[int64][]string, error) {
	leader, out, err := c.leaderDump(ctx)
	if err != nil {
		return nil, err
	}
	nodes, ok := dumpEphemerals(out)
	if !ok {
		return nil, fmt.Errorf("%w: server %d answered %q", ErrNoSessionDump, leader, firstLine(out))
	}
	return nodes, nil
}

// dumpEphemerals returns the ephemeral nodes a 'dump' reply lists under
// "Sessions with Ephemerals": a "0x<id>:" line per session, then one
// tab-indented path per node.
func dumpEphemerals(out string) (map[int64][]string, bool) {
	_, rest, ok := strings.Cut(out, "Sessions with Ephemerals")
	if !ok {
		return nil, false
	}
	rest, _, _ = strings.Cut(rest, "Connections dump:")
	nodes := make(map[int64][]string)
	var sid int64
	for _, line := range strings.Split(rest, "\n")[1:] {
		switch {
		case strings.HasPrefix(line, "0x") && strings.HasSuffix(line, ":"):
			id, err := strconv.ParseUint(strings.TrimSuffix(line[2:], ":"), 16, 64)
			if err != nil {
				return nil, false
			}
			sid = int64(id)
			nodes[sid] = nil
		case strings.HasPrefix(line, "\t") && sid != 0:
			nodes[sid] = append(nodes[sid], strings.TrimPrefix(line, "\t"))
		}
	}
	return nodes, true
}

// leaderDump returns the leader's index and its 'dump': the leader owns
// session expiry and the ephemeral nodes' bookkeeping.
func (c *Cluster) leaderDump(ctx context.Context) (int, string, error) {
	leader, err := c.Leader(ctx)
	if err != nil {
		return -1, "", err
	}
	out, err := c.FourLetter(ctx, leader, "dump")
	return leader, out, err
}
