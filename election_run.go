package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/errs"
)

// minResignTimeout bounds Run's resignation when the session timeout is
// shorter; an unfinished delete continues in the background.
const minResignTimeout = time.Second

// Run leads for as long as ctx lasts, in the style of Curator's
// LeaderSelector with auto-requeue: it campaigns with value, calls fn with
// the Term and a context that is cancelled when the term ends (loss of
// leadership) or ctx ends, resigns when fn returns, and campaigns again.
//
// fn must return soon after its context is cancelled and must stop acting
// as leader by then. If fn returns nil, or returns anything after the term
// was lost, Run campaigns again. If fn returns an error while still leading,
// Run resigns and returns that error. Run also returns, with nothing left on
// the server, when ctx ends (an error satisfying errors.Is(err, ctx.Err()))
// or Campaign fails otherwise (for example with ErrSessionClosed). Run
// returns ErrAlreadyLocked at once, sending nothing, if the Election
// is already campaigning, leading or running; while Run runs, Campaign and
// Run on the Election return ErrAlreadyLocked too, even between two
// terms. Run returns ErrInvalidArgument for a nil fn.
func (e *Election) Run(ctx context.Context, value []byte, fn func(ctx context.Context, t *Term) error) error {
	if e.unmade() {
		return unmade("Election", "NewElection")
	}
	if err := checkCtx(ctx); err != nil {
		return named(ctx, "campaign", e.q.Dir, err)
	}
	if fn == nil {
		return fmt.Errorf("%w: nil leader function", ErrInvalidArgument)
	}
	if err := e.startRun(); err != nil {
		return err
	}
	defer e.endRun()
	for {
		t, err := e.campaign(ctx, value, true)
		if err != nil {
			return named(ctx, "campaign", e.q.Dir, err)
		}
		if err := e.lead(ctx, t, fn); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return named(ctx, "campaign", e.q.Dir, err)
		}
	}
}

// startRun claims the Election for Run, whose Campaigns alone may begin
// until endRun: between two terms nobody else may slip a campaign in.
func (e *Election) startRun() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running || e.busyLocked() {
		return errs.ErrAlreadyCampaign
	}
	e.running = true
	return nil
}

func (e *Election) endRun() {
	e.mu.Lock()
	e.running = false
	e.mu.Unlock()
}

// lead runs fn for term t and resigns afterwards, even if fn panics.
func (e *Election) lead(ctx context.Context, t *Term, fn func(context.Context, *Term) error) (err error) {
	lctx, cancel := t.context(ctx)
	defer func() {
		cancel()
		resignErr := e.resignAfter(ctx)
		if err == nil && errors.Is(resignErr, ErrSessionClosed) {
			err = resignErr
		}
	}()
	if ferr := fn(lctx, t); ferr != nil && t.Err() == nil && ctx.Err() == nil {
		return ferr
	}
	return nil
}

// resignAfter resigns within a bounded time, even when ctx has ended: the
// caller is done leading either way, and the successor should not have to
// wait for our session to expire.
func (e *Election) resignAfter(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(e.s.c.Timeout(), minResignTimeout))
	defer cancel()
	err := e.Resign(rctx)
	if errors.Is(err, errs.ErrLeadershipLost) || errors.Is(err, errs.ErrNotLeader) {
		return nil
	}
	return err
}
