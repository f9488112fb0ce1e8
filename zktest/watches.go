package zktest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Watches returns the data and exists watches each session holds on
// running, unpaused servers, by session id (as a client reports it:
// zk.Client.SessionID): the paths from the servers' 'wchc'. A test
// can wait for a client to have set its watch, or to have set it again
// after it fired, instead of sleeping. Child watches are not listed: wchc
// reports data and exists watches only (WatchCount counts child watches
// too).
func (c *Cluster) Watches(ctx context.Context) (map[int64][]string, error) {
	out := map[int64][]string{}
	for i, s := range c.servers {
		if !s.answering() {
			continue
		}
		text, err := c.FourLetter(ctx, i, "wchc")
		if err != nil {
			return nil, err
		}
		if err := parseWchc(text, out); err != nil {
			return nil, fmt.Errorf("zktest: wchc on server %d: %w", i, err)
		}
	}
	return out, nil
}

// WatchCount returns the number of watches the running, unpaused servers
// hold, summed over them like MntrSum: 'mntr' zk_watch_count. A server
// counts one watch per path and session for data and exists watches
// together (a session that both reads and checks a node holds one), and
// one more per path and session for a child watch; the count drops as
// watches fire or their sessions close. A test waits for it to reach the
// number of waiters instead of sleeping until they have set their watches.
// Each four-letter command, this one included, counts as one packet in
// zk_packets_received: a test that counts requests while it polls the
// watch count must subtract its polls.
func (c *Cluster) WatchCount(ctx context.Context) (int64, error) {
	return c.MntrSum(ctx, "zk_watch_count")
}

// parseWchc adds wchc's "0x<session>" lines, each followed by its watched
// paths indented with a tab, to out.
func parseWchc(text string, out map[int64][]string) error {
	var sid int64
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[2:]), 16, 64)
			if err != nil {
				return fmt.Errorf("session line %q: %w", line, err)
			}
			sid, in = int64(id), true
		case in && strings.HasPrefix(line, "\t"):
			out[sid] = append(out[sid], strings.TrimSpace(line))
		}
	}
	return nil
}
