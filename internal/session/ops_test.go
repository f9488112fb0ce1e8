package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

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
