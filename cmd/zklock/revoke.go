package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/zklock/zklock"
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
	nodes, err := zklock.Revoke(ctx, s, pos[0])
	switch {
	case errors.Is(err, zklock.ErrNotRevocable):
		return c.failf(exitError, "the holder must be made revocable ('zklock run --revocable'; WithRevocable; "+
			"Curator: makeRevocable); 'zklock break' deletes its node instead", "%v", err)
	case errors.Is(err, zklock.ErrNotLocked):
		return c.failf(exitError, "", "%v", err)
	case err != nil:
		return c.opFailed(err)
	}
	for _, n := range nodes {
		fmt.Fprintf(c.stdout, "revocation requested: %s\n", n)
	}
	return exitOK
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
		return c.failf(exitError, "", "%v", err)
	case err != nil:
		return c.opFailed(err)
	}
	for _, h := range broken {
		fmt.Fprintf(c.stdout, "broke: %s (session 0x%x, token %d, data %q)\n", h.Path, h.Session, h.Token, h.Data)
	}
	c.warnf("the old holder was not told and may still act; only fencing (its Guard fails, the next Token is larger) protects the resource")
	return exitOK
}
