package client_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// TestCreateModes: every mode, and what create2 returns in the same round
// trip: an ephemeral node's owner is the session, a sequential node's name
// carries the counter, the czxid is the one Exists reports; a container
// (opcode 19) and a TTL node (opcode 21) return their Stat too.
func TestCreateModes(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	for _, tc := range []struct {
		mode      client.CreateMode
		ttl       time.Duration
		sequence  bool
		ephemeral bool
	}{
		{mode: client.ModePersistent},
		{mode: client.ModeEphemeral, ephemeral: true},
		{mode: client.ModePersistentSequential, sequence: true},
		{mode: client.ModeEphemeralSequential, sequence: true, ephemeral: true},
		{mode: client.ModeContainer},
		{mode: client.ModePersistentTTL, ttl: time.Hour},
		{mode: client.ModePersistentSequentialTTL, ttl: time.Hour, sequence: true},
	} {
		p := dir + "/mode" + string(rune('0'+tc.mode)) + "-"
		var name string
		var st client.Stat
		var err error
		if tc.ttl > 0 {
			name, st, err = c.CreateTTL(ctx, p, []byte("d"), tc.mode, open, tc.ttl)
		} else {
			name, st, err = c.Create(ctx, p, []byte("d"), tc.mode, open)
		}
		if err != nil {
			t.Fatalf("mode %d: %v", tc.mode, err)
		}
		if tc.sequence != (len(name) == len(p)+10 && strings.HasPrefix(name, p)) || !tc.sequence && name != p {
			t.Errorf("mode %d: name %q for %q", tc.mode, name, p)
		}
		if owner := st.EphemeralOwner; tc.ephemeral && owner != c.SessionID() || !tc.ephemeral && tc.ttl == 0 && owner != 0 {
			t.Errorf("mode %d: ephemeralOwner 0x%x, session 0x%x", tc.mode, owner, c.SessionID())
		}
		est, ok, err := c.Exists(ctx, name)
		if err != nil || !ok || est.Czxid != st.Czxid || st.Czxid == 0 {
			t.Errorf("mode %d: exists %+v %v %v; create's stat %+v", tc.mode, est, ok, err, st)
		}
	}
}

// TestCreateTTLNeedsExtendedTypes: a server without
// zookeeper.extendedTypesEnabled refuses TTL nodes.
func TestCreateTTLNeedsExtendedTypes(t *testing.T) {
	zk := startServer(t)
	c := dial(t, zk.Servers(), client.Config{})
	_, _, err := c.CreateTTL(bounded(t), "/ttl", nil, client.ModePersistentTTL, open, time.Minute)
	if !errors.Is(err, client.ErrUnimplemented) {
		t.Fatalf("got %v, want ErrUnimplemented", err)
	}
}
