package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"path"
	"strings"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
)

// revoke is 'zklock revoke [flags] PATH': ask the holders of the lock at
// PATH (or the one contender whose node PATH is) to release, the way
// Curator's Revoker does.
func (c *cli) revoke(args []string) int {
	var f connFlags
	fs := c.newFlagSet()
	f.register(fs)
	pos, _, code, ok := c.parseArgs(fs, args, []string{"PATH"}, false)
	if !ok {
		return code
	}
	ctx, s, done, code := c.open(&f)
	if s == nil {
		return code
	}
	defer done()
	unmarked := unmarkedTargets(ctx, s, pos[0])
	nodes, err := zklock.Revoke(ctx, s, pos[0])
	switch {
	case errors.Is(err, zklock.ErrNotRevocable):
		return c.failf(exitError, "the holder must be made revocable ('zklock run --revocable'; WithRevocable; "+
			"Curator: makeRevocable); 'zklock break' deletes its node instead", "%v", err)
	case errors.Is(err, zklock.ErrNotLocked):
		return c.failf(exitError, semaphoreHint(err), "%v", err)
	case err != nil:
		return c.opFailed(err)
	}
	for _, n := range nodes {
		if unmarked[n] {
			fmt.Fprintf(c.stdout, "revocation written: %s (no revocable zklock holder's node: a Curator holder made "+
				"revocable is told; a zklock election leader or reader does not listen, and its value now reads %s)\n",
				n, queue.RevokeMessage)
			continue
		}
		fmt.Fprintf(c.stdout, "revocation requested: %s\n", n)
	}
	return exitOK
}

// unmarkedTargets returns the nodes Revoke is about to write whose data
// carries no zklock revocable mark (queue.RevocableTag): an election
// candidate's, a reader's without --revocable, a cohort's, or Curator's.
// Revoke writes them (it cannot tell them from Curator's, whose holders
// it must reach), and the request replaces their data, so they are read
// before. A node it could not read is left out: only its plain line is
// printed then.
func unmarkedTargets(ctx context.Context, s *zklock.Session, p string) map[string]bool {
	nodes := []string{p}
	if _, ok := queue.Parse(path.Base(p)); !ok {
		names, _, err := s.Client().Children(ctx, p)
		if err != nil {
			return nil
		}
		nodes = queue.HoldersOf(p, names)
	}
	out := map[string]bool{}
	for _, n := range nodes {
		if data, _, err := s.Client().Get(ctx, n); err == nil && !bytes.HasSuffix(data, []byte(queue.RevocableTag)) {
			out[n] = true
		}
	}
	return out
}

// breakLock is 'zklock break [--force] [flags] PATH': delete the holders'
// nodes of a stuck lock.
type breakFlags struct {
	conn  connFlags
	force bool
}

func (f *breakFlags) register(fs *flag.FlagSet) {
	f.conn.register(fs)
	fs.BoolVar(&f.force, "force", false, "delete the holders' nodes although their sessions are alive")
}

func (c *cli) breakLock(args []string) int {
	var f breakFlags
	fs := c.newFlagSet()
	f.register(fs)
	pos, _, code, ok := c.parseArgs(fs, args, []string{"PATH"}, false)
	if !ok {
		return code
	}
	ctx, s, done, code := c.open(&f.conn)
	if s == nil {
		return code
	}
	defer done()
	broken, err := zklock.Break(ctx, s, pos[0], f.force)
	var alive *zklock.LockedError
	switch {
	case errors.Is(err, zklock.ErrHolderAlive) && errors.As(err, &alive) && len(alive.Holders) > 0:
		h := alive.Holders[0]
		// The node's creation is when the holder queued, not when it began
		// to hold (ZooKeeper records no such time): said as what it is.
		fmt.Fprintf(c.stdout, "held by session 0x%x (node created %s, token %d, data %q): %s\n",
			h.Session, h.Created.Format(timeFormat), h.Token, h.Data, h.Path)
		return c.failf(exitError, "ask it to let go with 'zklock revoke', or wait for its session to expire; --force deletes its node",
			"the holder's session is alive: it may be working, and breaking the lock will not stop it")
	case errors.Is(err, zklock.ErrNotLocked):
		return c.failf(exitError, semaphoreHint(err), "%v", err)
	case err != nil:
		return c.opFailed(err)
	}
	for _, h := range broken {
		fmt.Fprintf(c.stdout, "broke: %s (session 0x%x, token %d, data %q)\n", h.Path, h.Session, h.Token, h.Data)
	}
	c.warnf("the old holder was not told and may still act; only fencing (its Guard fails, the next Token is larger) protects the resource")
	return exitOK
}

// semaphoreHint is what to do instead when err says the path is a
// semaphore's, "" otherwise.
func semaphoreHint(err error) string {
	if !strings.Contains(err.Error(), "is a semaphore") {
		return ""
	}
	return "'zklock status PATH' lists its lease nodes and their sessions; a lease ends when its holder " +
		"releases it or its session ends"
}
