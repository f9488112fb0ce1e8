package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTransient(t *testing.T) {
	for _, err := range []error{
		zk.ErrConnectionClosed, zk.ErrNoServer, zk.ErrSessionMoved,
		fmt.Errorf("zklock: get /x: %w", zk.ErrConnectionClosed),
		errors.New("unknown error: -7"), errors.New("unknown error: -4"),
	} {
		require.True(t, transient(err), "%v", err)
	}
	for _, err := range []error{
		nil, zk.ErrNoNode, zk.ErrNodeExists, zk.ErrNoAuth, zk.ErrSessionExpired, zk.ErrClosing,
		context.Canceled, errors.New("unknown error: -70"),
	} {
		require.False(t, transient(err), "%v", err)
	}
}

// A request whose write failed gets go-zookeeper's raw network error; call
// must report it as connection loss, which retries and the protected create
// recover from, keeping the network error for the message.
func TestCallWriteErrorIsConnectionLoss(t *testing.T) {
	c := &Conn{done: make(chan struct{})}
	for _, raw := range []error{
		&net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE},
		&net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET},
	} {
		_, err := call(context.Background(), c, func() (int, error) { return 0, raw })
		if !errors.Is(err, zk.ErrConnectionClosed) || !transient(err) || !errors.Is(err, raw) {
			t.Errorf("call returned %v for %v: want connection loss wrapping it", err, raw)
		}
	}
	_, err := call(context.Background(), c, func() (int, error) { return 0, zk.ErrNoNode })
	if err != zk.ErrNoNode {
		t.Errorf("call returned %v for zk.ErrNoNode: want it unchanged", err)
	}
}

func TestPrimitivePath(t *testing.T) {
	for node, want := range map[string]string{
		"/a/lock/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-lock-0000000001":        "/a/lock",
		"/a/sem/leases/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-lease-0000000003": "/a/sem",
		"/a/rw/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-__READ__0000000002":       "/a/rw",
	} {
		if got := primitivePath(node); got != want {
			t.Errorf("primitivePath(%s) = %s, want %s", node, got, want)
		}
	}
}

// testConn is a Conn with just what call and retry use.
func testConn(policies *int) *Conn {
	return &Conn{done: make(chan struct{}), cfg: Config{Backoff: func() backoff.BackOff {
		*policies++
		return backoff.NewConstantBackOff(time.Millisecond)
	}}}
}

// The retry policy is built only once a first attempt failed transiently.
func TestRetryBuildsPolicyOnlyOnTransientFailure(t *testing.T) {
	policies := 0
	c := testConn(&policies)
	v, err := retry(context.Background(), c, func() (int, error) { return 7, nil })
	require.NoError(t, err)
	require.Equal(t, 7, v)
	_, err = retry(context.Background(), c, func() (int, error) { return 0, zk.ErrNoNode })
	require.ErrorIs(t, err, zk.ErrNoNode)
	require.Zero(t, policies, "no policy for a first attempt that settles")

	attempts := 0
	v, err = retry(context.Background(), c, func() (int, error) {
		if attempts++; attempts < 3 {
			return 0, zk.ErrConnectionClosed
		}
		return 9, nil
	})
	require.NoError(t, err)
	require.Equal(t, 9, v)
	require.Equal(t, 3, attempts)
	require.Equal(t, 1, policies)
}

// retryUntil gives up with errStopped once stop closes, and retry with
// ctx's error once ctx ends, attempting nothing more.
func TestRetryStops(t *testing.T) {
	policies := 0
	c := testConn(&policies)
	stop := make(chan struct{})
	attempts := 0
	_, err := retryUntil(context.Background(), c, stop, func() (int, error) {
		if attempts++; attempts == 2 {
			close(stop)
		}
		return 0, zk.ErrConnectionClosed
	})
	require.ErrorIs(t, err, errStopped)
	require.Equal(t, 2, attempts)

	ctx, cancel := context.WithCancel(context.Background())
	attempts = 0
	_, err = retry(ctx, c, func() (int, error) {
		if attempts++; attempts == 2 {
			cancel()
		}
		return 0, zk.ErrNoServer
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 2, attempts)
}
