package docker

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock/zktest/internal/fallback"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRegistered checks that importing the package makes it zktest's
// fallback.
func TestRegistered(t *testing.T) {
	b := fallback.Registered()
	require.NotNil(t, b)
	assert.Equal(t, "docker zookeeper:3.8", b.Name())
}

// TestServerNeverStarted checks what needs no Docker engine: a server that
// was never started has nothing to stop, and once closed it cannot start.
func TestServerNeverStarted(t *testing.T) {
	s := backend{}.NewServer(fallback.Config{HostPort: 2181})
	assert.False(t, s.Running())
	exited, _ := s.Exited()
	assert.False(t, exited)
	assert.Equal(t, "(no container)", s.LogTail(10))
	assert.NoError(t, s.Stop())
	assert.NoError(t, s.Kill())
	assert.NoError(t, s.Close())
	assert.NoError(t, s.Close(), "a second Close does nothing")
	assert.ErrorIs(t, s.Start(context.Background()), errClosed)
}

func TestLastLines(t *testing.T) {
	assert.Equal(t, "b\nc", lastLines("a\nb\nc\n", 2))
	assert.Equal(t, "a", lastLines("a", 2))
}
