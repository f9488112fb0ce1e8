package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A connect caps the deadline at its send time plus the lowest timeout
// its server grants, until its response arrives; a connect whose response
// never arrives caps it until the anchor is lag past it; a server whose
// bounds are unknown may grant anything, and its connect ends the epoch.
func TestRearmCapsTheDeadline(t *testing.T) {
	low := fourLetterServer(t, map[string]string{
		"conf": confAnswer(100, 10, 200, 1200), "srvr": "Mode: follower\n"})
	refused := fourLetterServer(t, map[string]string{
		"conf": "conf is not executed because it is not in the whitelist.\n", "srvr": "Mode: follower\n"})
	c := newEvidenceConn(t) // lag 1.1s, timeout 4s, margin 800ms
	c.cfg.Timing, c.cfg.TimingSet = Timing{Tick: 100 * time.Millisecond, SyncLimit: 10}, true
	c.cfg.Servers = []string{low, refused}
	c.wake = make(chan struct{}, 1)
	c.raiseAnchor(c.since(time.Now()))
	before := c.OwnershipDeadline()

	nc, err := c.dialServer(t.Context(), "tcp", low)
	require.NoError(t, err)
	nc.Close()
	capped := c.OwnershipDeadline()
	require.Less(t, time.Until(capped), 500*time.Millisecond, "1.2s after the connect, less the 800ms margin")
	require.True(t, capped.Before(before))
	c.answered(low) // the response arrived: negotiated has the grant
	require.Equal(t, before, c.OwnershipDeadline())

	nc, err = c.dialServer(t.Context(), "tcp", low)
	require.NoError(t, err)
	nc.Close()
	c.settleRearms() // the next dial: this one's response never came
	c.answered(low)  // a later response does not lift it
	require.Equal(t, capped.Round(time.Second), c.OwnershipDeadline().Round(time.Second), "still capped")
	sent := c.rearms[0].sent
	c.raiseAnchor(sent + int64(time.Second)) // less than lag past it
	require.Len(t, c.rearms, 1)
	c.raiseAnchor(sent + int64(1100*time.Millisecond))
	require.Empty(t, c.rearms, "the anchor passed it by lag")
	require.Equal(t, int64(noRearm), c.rearmEnd.Load())

	nc, err = c.dialServer(t.Context(), "tcp", refused)
	require.NoError(t, err)
	nc.Close()
	require.Equal(t, SourceStated, c.sv.Load().source)
	require.LessOrEqual(t, time.Until(c.OwnershipDeadline()), time.Duration(0), "bounds unknown: the deadline is past at once")
	select {
	case <-c.wake:
	default:
		t.Fatal("the watchdog was not woken")
	}
	c.clearRearms() // a new session
	require.Equal(t, int64(noRearm), c.rearmEnd.Load())
}

// A server that does not serve yet says nothing of its configuration:
// what it told before stands, and a refusal is not made of it.
func TestLearnedKeepsWhatWasTold(t *testing.T) {
	c := newEvidenceConn(t)
	c.cfg.Servers = []string{"a:1"}
	c.learned("a:1", serverFacts{confOK: true, conf: serverConf{tick: 100 * time.Millisecond, syncLimit: 20,
		minSess: time.Second, maxSess: 9 * time.Second, quorum: true}, mode: "follower"})
	require.Equal(t, SourceConf, c.sv.Load().source)
	c.learned("a:1", serverFacts{mode: "follower"}) // conf: not currently serving
	require.Equal(t, SourceConf, c.sv.Load().source)
	require.Equal(t, 20, c.sv.Load().timing.SyncLimit)
	c.learned("a:1", serverFacts{refused: true, mode: "follower"})
	require.Equal(t, SourceUnknown, c.sv.Load().source)
	require.ErrorIs(t, c.timingErr(c.sv.Load()), ErrTimingUnknown)
	require.Contains(t, fmt.Sprint(c.timingErr(c.sv.Load())), "a:1")
}
