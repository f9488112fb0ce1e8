package zklock

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"
)

// A request whose write failed gets go-zookeeper's raw network error; call
// must report it as connection loss, which retries and the protected create
// recover from, keeping the network error for the message.
func TestCallWriteErrorIsConnectionLoss(t *testing.T) {
	s := &Session{done: make(chan struct{})}
	for _, raw := range []error{
		&net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE},
		&net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET},
	} {
		_, err := call(context.Background(), s, func() (int, error) { return 0, raw })
		if !errors.Is(err, zk.ErrConnectionClosed) || !transient(err) || !errors.Is(err, raw) {
			t.Errorf("call returned %v for %v: want connection loss wrapping it", err, raw)
		}
	}
	_, err := call(context.Background(), s, func() (int, error) { return 0, zk.ErrNoNode })
	if err != zk.ErrNoNode {
		t.Errorf("call returned %v for zk.ErrNoNode: want it unchanged", err)
	}
}
