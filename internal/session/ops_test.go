package session

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTransient(t *testing.T) {
	for _, err := range []error{
		client.ErrConnectionLoss, client.ErrSessionMoved, client.ErrOperationTimeout, client.ErrThrottledOp,
		&client.Error{Op: "get", Path: "/x", Err: client.ErrConnectionLoss},
		fmt.Errorf("zklock: get /x: %w", client.ErrConnectionLoss),
	} {
		require.True(t, transient(err), "%v", err)
	}
	for _, err := range []error{
		nil, client.ErrNoNode, client.ErrNodeExists, client.ErrNoAuth, client.ErrSessionExpired, client.ErrClosed,
		&client.Error{Op: "create", Path: "/x", Err: client.ErrNodeExists},
		context.Canceled, errors.New("connection reset by peer"),
	} {
		require.False(t, transient(err), "%v", err)
	}
}

// A request that waited for a connection until its session expired was not
// sent: retry sends it again (in the new session); nothing else that is
// not transient is retried.
func TestRetryable(t *testing.T) {
	require.True(t, retryable(&client.Error{Op: "children", Path: "/x", Err: client.ErrSessionExpired}))
	require.True(t, retryable(client.ErrConnectionLoss))
	require.False(t, transient(client.ErrSessionExpired), "not a connection loss: no outcome to recover")
	for _, err := range []error{nil, client.ErrNoNode, client.ErrClosed, client.ErrAuthFailed} {
		require.False(t, retryable(err), "%v", err)
	}
	policies := 0
	c := testConn(t, &policies)
	attempts := 0
	v, err := retry(context.Background(), c, func(context.Context) (int, error) {
		if attempts++; attempts == 1 {
			return 0, &client.Error{Op: "children", Path: "/x", Err: client.ErrSessionExpired}
		}
		return 5, nil
	})
	require.NoError(t, err)
	require.Equal(t, 5, v)
	require.Equal(t, 2, attempts)
}

// callUntil reports the client's ErrClosed as the Conn's, an epoch that
// ends during the request as errStopped (the request carried the epoch's
// Done as its stop channel, and the client returned ErrStopped), and the
// caller's own ctx as that ctx's error, not errStopped, even when the
// epoch ended too.
func TestCallUntil(t *testing.T) {
	_, err := callUntil(context.Background(), nil, func(ctx context.Context) (int, error) {
		require.Nil(t, client.StopOf(ctx), "no epoch: no stop channel")
		return 0, &client.Error{Op: "get", Path: "/x", Err: client.ErrClosed}
	})
	require.ErrorIs(t, err, ErrClosed)

	newEpoch := func() *epoch {
		ep := &epoch{}
		ep.ctx, ep.cancel = context.WithCancel(context.Background())
		ep.done = ep.ctx.Done()
		return ep
	}
	ep := newEpoch()
	_, err = callUntil(context.Background(), ep, func(ctx context.Context) (int, error) {
		ep.cancel() // the epoch ends while the request waits
		<-client.StopOf(ctx)
		return 0, client.ErrStopped // as the client's request does
	})
	require.ErrorIs(t, err, errStopped)

	ep = newEpoch()
	defer ep.cancel()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = callUntil(ctx, ep, func(rctx context.Context) (int, error) {
		cancel()
		<-rctx.Done()
		return 0, rctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, errStopped)

	ep = newEpoch()
	ctx, cancel = context.WithCancel(context.Background())
	_, err = callUntil(ctx, ep, func(rctx context.Context) (int, error) {
		cancel()
		ep.cancel()
		return 0, client.ErrStopped // the stop channel won the client's select
	})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, errStopped)
}

// testConn is a Conn with just what retry uses.
func testConn(t *testing.T, policies *int) *Conn {
	c := &Conn{done: make(chan struct{}), cfg: Config{Backoff: func() backoff.BackOff {
		*policies++
		return backoff.NewConstantBackOff(time.Millisecond)
	}}}
	c.bg, c.stopBg = context.WithCancel(context.Background())
	t.Cleanup(c.stopBg)
	return c
}

// The retry policy is built only once a first attempt failed transiently.
func TestRetryBuildsPolicyOnlyOnTransientFailure(t *testing.T) {
	policies := 0
	c := testConn(t, &policies)
	v, err := retry(context.Background(), c, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	require.Equal(t, 7, v)
	_, err = retry(context.Background(), c, func(context.Context) (int, error) { return 0, client.ErrNoNode })
	require.ErrorIs(t, err, client.ErrNoNode)
	require.Zero(t, policies, "no policy for a first attempt that settles")

	attempts := 0
	v, err = retry(context.Background(), c, func(context.Context) (int, error) {
		if attempts++; attempts < 3 {
			return 0, client.ErrConnectionLoss
		}
		return 9, nil
	})
	require.NoError(t, err)
	require.Equal(t, 9, v)
	require.Equal(t, 3, attempts)
	require.Equal(t, 1, policies)
}

// retryUntil gives up with errStopped once its epoch ends, and retry with
// ctx's error once ctx ends, attempting nothing more.
func TestRetryStops(t *testing.T) {
	policies := 0
	c := testConn(t, &policies)
	ep := &epoch{}
	ep.ctx, ep.cancel = context.WithCancel(context.Background())
	attempts := 0
	_, err := retryUntil(context.Background(), c, ep, func(context.Context) (int, error) {
		if attempts++; attempts == 2 {
			ep.cancel()
		}
		return 0, client.ErrConnectionLoss
	})
	require.ErrorIs(t, err, errStopped)
	require.Equal(t, 2, attempts)

	ctx, cancel := context.WithCancel(context.Background())
	attempts = 0
	_, err = retry(ctx, c, func(context.Context) (int, error) {
		if attempts++; attempts == 2 {
			cancel()
		}
		return 0, client.ErrConnectionLoss
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 2, attempts)
}

// wrapOp of a request that succeeded allocates nothing: every release goes
// through it.
func TestWrapOpNilAllocatesNothing(t *testing.T) {
	var err error
	if n := testing.AllocsPerRun(100, func() { err = wrapOp("delete", "/x", nil) }); n != 0 {
		t.Fatalf("wrapOp(nil) allocates %v times", n)
	}
	require.NoError(t, err)
}
