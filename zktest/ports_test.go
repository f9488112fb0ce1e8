package zktest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ephemeralRange is the kernel's range for ports it picks (Linux), or the
// usual default elsewhere.
func ephemeralRange(t *testing.T) (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphLo, defaultEphHi
	}
	f := strings.Fields(string(b))
	require.Len(t, f, 2)
	lo, err := strconv.Atoi(f[0])
	require.NoError(t, err)
	hi, err := strconv.Atoi(f[1])
	require.NoError(t, err)
	return lo, hi
}

// TestEnsemblePortsNotEphemeral: every port of an ensemble is one the kernel
// never gives an outgoing connection, so no connection of another process
// can take it before a server binds it or while a server restarts. Before,
// the ports were the kernel's "127.0.0.1:0" choices, inside its ephemeral
// range, and a chaos run under load lost a server 2.5 s after the ensemble
// served, its client port refusing connections for the rest of the run.
func TestEnsemblePortsNotEphemeral(t *testing.T) {
	lo, hi := ephemeralRange(t)
	c := StartEnsemble(t, 3)
	for i, s := range c.servers {
		n := s.ctl.(*process).n
		for _, p := range []int{n.clientPort, n.quorumPort, n.electionPort, n.securePort} {
			assert.True(t, p < lo || p > hi, "server %d: port %d is in the ephemeral range %d-%d", i, p, lo, hi)
		}
	}
	// Reserved while the cluster lives: another reservation cannot have them.
	dir := portLockDir()
	n := c.servers[1].ctl.(*process).n
	f, err := lockPort(dir, n.electionPort)
	require.NoError(t, err)
	assert.Nil(t, f, "server 1's election port %d could be reserved again while its cluster lives", n.electionPort)
	if f != nil {
		f.Close()
	}
}

// TestReservePortsExclusive: two reservations never share a port, and a
// released port can be reserved again.
func TestReservePortsExclusive(t *testing.T) {
	a, err := reservePorts(20)
	require.NoError(t, err)
	b, err := reservePorts(20)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, p := range append(append([]int(nil), a.ports...), b.ports...) {
		assert.False(t, seen[p], "port %d reserved twice", p)
		seen[p] = true
	}
	dir := portLockDir()
	f, err := lockPort(dir, a.ports[0])
	require.NoError(t, err)
	assert.Nil(t, f, "a reserved port was locked again")
	a.release()
	a.release() // twice is harmless
	f, err = lockPort(dir, a.ports[0])
	require.NoError(t, err)
	require.NotNil(t, f, "a released port stayed locked")
	unlockFile(f)
	f.Close()
	b.release()
}
