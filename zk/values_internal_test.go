package zk

import (
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/session"
)

// The exported constants are plain values, so that go doc shows them; the
// package converts at the boundary by value, so each must equal the
// internal constant it stands for.
func TestValuesMatchInternal(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"ModePersistent", int64(ModePersistent), int64(client.ModePersistent)},
		{"ModeEphemeral", int64(ModeEphemeral), int64(client.ModeEphemeral)},
		{"ModePersistentSequential", int64(ModePersistentSequential), int64(client.ModePersistentSequential)},
		{"ModeEphemeralSequential", int64(ModeEphemeralSequential), int64(client.ModeEphemeralSequential)},
		{"ModeContainer", int64(ModeContainer), int64(client.ModeContainer)},
		{"NodeCreated", int64(NodeCreated), int64(client.EventNodeCreated)},
		{"NodeDeleted", int64(NodeDeleted), int64(client.EventNodeDeleted)},
		{"NodeDataChanged", int64(NodeDataChanged), int64(client.EventNodeDataChanged)},
		{"NodeChildrenChanged", int64(NodeChildrenChanged), int64(client.EventNodeChildrenChanged)},
		{"NodeWatchEnded", int64(NodeWatchEnded), int64(client.EventNotWatching)},
		{"StateConnecting", int64(StateConnecting), int64(session.StateConnecting)},
		{"StateConnected", int64(StateConnected), int64(session.StateConnected)},
		{"StateSuspended", int64(StateSuspended), int64(session.StateSuspended)},
		{"StateLost", int64(StateLost), int64(session.StateLost)},
		{"StateReconnected", int64(StateReconnected), int64(session.StateReconnected)},
		{"StateExpired", int64(StateExpired), int64(session.StateExpired)},
		{"StateClosed", int64(StateClosed), int64(session.StateClosed)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, the internal value is %d", c.name, c.got, c.want)
		}
	}
	for st := StateConnecting; st <= StateClosed; st++ {
		if st.String() != session.State(st).String() {
			t.Errorf("State(%d).String() = %q, want %q", st, st.String(), session.State(st).String())
		}
	}
}
