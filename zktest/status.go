package zktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// pollInterval is how often the waiting methods look again.
const pollInterval = 100 * time.Millisecond

// serverState is what one 'srvr' poll says about a server.
type serverState struct {
	mode string // leader, follower, standalone, observer; "" if not serving
	zxid int64
	err  error
}

// poll asks every running, unpaused server for 'srvr' in parallel; the
// others get a zero state with a nil error and mode "".
func (c *Cluster) poll(ctx context.Context) []serverState {
	states := make([]serverState, len(c.servers))
	var wg sync.WaitGroup
	for i, s := range c.servers {
		if !s.answering() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := boundedCtx(ctx, pollTimeout)
			defer cancel()
			out, err := fourLetter(pctx, s.addr, "srvr")
			states[i].err = err
			states[i].mode, states[i].zxid = srvrMode(out)
		}()
	}
	wg.Wait()
	return states
}

// Leader returns the index of the server that is currently leader (or the
// standalone server). It asks each running, unpaused server once; if none
// says so it returns ErrNoLeader, so after a fault call WaitReady first. If
// two servers claim to lead (an old leader that has not noticed yet), the
// one with the newer zxid wins.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	leader, best := -1, int64(-1)
	var errs []error
	for i, st := range c.poll(ctx) {
		if st.err != nil {
			errs = append(errs, st.err)
		}
		if (st.mode == "leader" || st.mode == "standalone") && st.zxid > best {
			leader, best = i, st.zxid
		}
	}
	if leader < 0 {
		return -1, errors.Join(append([]error{ErrNoLeader}, errs...)...)
	}
	return leader, nil
}

// WaitReady waits until every running, unpaused server serves requests
// and one of them is leader, polling every 100ms. Stopped and paused servers
// are not waited for, nor, during a Partition, the servers cut off from the
// majority: then it waits for a leader on the majority side (and never
// returns nil if no side has a majority). Without a deadline in ctx it gives up after the start
// timeout (WithStartTimeout).
func (c *Cluster) WaitReady(ctx context.Context) error {
	ctx, cancel := boundedCtx(ctx, c.opts.startTimeout)
	defer cancel()
	for {
		why := c.notReady(c.poll(ctx))
		if why == "" {
			return nil
		}
		if err := sleepCtx(ctx, pollInterval); err != nil {
			return fmt.Errorf("zktest: cluster not ready (%s): %w", why, err)
		}
	}
}

// notReady says why states are not those of a serving cluster, or "".
// During a partition it is enough that one side that can form a quorum
// serves with a leader (see quorumSides); the other servers are not
// waited for.
func (c *Cluster) notReady(states []serverState) string {
	why := "no side of the partition has a majority"
	for _, side := range c.quorumSides() {
		if why = c.sideNotReady(states, side); why == "" {
			return ""
		}
	}
	return why
}

// sideNotReady says why the servers of side are not serving with a leader.
func (c *Cluster) sideNotReady(states []serverState, side []int) string {
	leaders := 0
	for _, i := range side {
		st := states[i]
		switch {
		case !c.servers[i].answering():
			continue
		case st.err != nil:
			return st.err.Error()
		case st.mode == "":
			return fmt.Sprintf("server %d is not serving", i)
		case st.mode == "leader" || st.mode == "standalone":
			leaders++
		}
	}
	if leaders == 0 {
		return "no leader"
	}
	return ""
}

// quorumRunning reports whether a majority of the servers is running and
// unpaused, so that a (re)started server can be expected to serve.
func (c *Cluster) quorumRunning() bool {
	up := 0
	for _, s := range c.servers {
		if s.answering() {
			up++
		}
	}
	return up > len(c.servers)/2
}

// waitServerUp waits until server i answers 'ruok' and, if serving is set,
// also serves requests. It fails at once if the server's process dies.
func (c *Cluster) waitServerUp(ctx context.Context, i int, serving bool) error {
	s := c.servers[i]
	last := "no answer yet"
	for {
		if dead, status := s.ctl.exited(); dead {
			return fmt.Errorf("zktest: server %d (%s) exited during start: %s\n%s",
				i, s.addr, status, s.ctl.logTail(failLogLines))
		}
		if ok, why := serverUp(ctx, s.addr, serving); ok {
			return nil
		} else if why != "" {
			last = why
		}
		if err := sleepCtx(ctx, pollInterval); err != nil {
			return fmt.Errorf("zktest: server %d (%s) did not start (%s): %w", i, s.addr, last, err)
		}
	}
}

// serverUp polls addr once: it answers 'ruok', and serves if serving is set.
func serverUp(ctx context.Context, addr string, serving bool) (bool, string) {
	pctx, cancel := boundedCtx(ctx, pollTimeout)
	defer cancel()
	out, err := fourLetter(pctx, addr, "ruok")
	if err != nil {
		return false, err.Error()
	}
	// A server whose whitelist lacks ruok (WithFourLetterWords) says so:
	// it is up, and srvr (always allowed) tells whether it serves.
	if strings.TrimSpace(out) != "imok" && !strings.Contains(out, "not in the whitelist") {
		return false, fmt.Sprintf("ruok answered %q", out)
	}
	if !serving {
		return true, ""
	}
	out, err = fourLetter(pctx, addr, "srvr")
	if err != nil {
		return false, err.Error()
	}
	if mode, _ := srvrMode(out); mode == "" {
		return false, "not serving: " + firstLine(out)
	}
	return true, ""
}

// sleepCtx sleeps for d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
