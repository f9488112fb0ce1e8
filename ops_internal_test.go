package zklock

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

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
