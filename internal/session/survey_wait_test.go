package session

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// surveyOf runs the survey of servers for a session timeout of timeout,
// and returns the Conn and how long the survey took.
func surveyOf(t *testing.T, timeout time.Duration, servers ...string) (*Conn, time.Duration) {
	t.Helper()
	c := &Conn{cfg: Config{Dialer: (&net.Dialer{}).DialContext, Timeout: timeout, Servers: servers}}
	c.sv.Store(&survey{followers: true, source: SourceUnknown})
	began := time.Now()
	c.surveyServers(t.Context())
	return c, time.Since(began)
}

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silentServer accepts connections and never answers (a paused JVM's
// listening socket does as much); it closes them at the test's end.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, nc := range conns {
			nc.Close()
		}
	})
	return ln.Addr().String()
}

// Issue 47: one dead member cost NewSession 3.1 s, the survey asking it six
// times with pauses of 100 ms doubling; a silent one two handshake
// timeouts. A refused member is not asked again; a silent one, once the
// others answered, once. Either counts as a server that did not tell: the
// timing is the members' that told.
func TestSurveyDoesNotWaitOnDeadOrSilentMembers(t *testing.T) {
	t.Parallel()
	a := fourLetterServer(t, map[string]string{"conf": confAnswer(100, 15, 200, 20000), "srvr": "Mode: leader\n"})
	b := fourLetterServer(t, map[string]string{"conf": confAnswer(100, 15, 200, 20000), "srvr": "Mode: follower\n"})
	dead, silent := deadAddr(t), silentServer(t)
	told := Timing{Tick: 100 * time.Millisecond, SyncLimit: 15}

	c, took := surveyOf(t, 10*time.Second, a, b, dead)
	t.Logf("a dead member: the survey took %v", took.Round(time.Millisecond))
	sv := c.sv.Load()
	require.Equal(t, SourceConf, sv.source)
	require.Equal(t, told, sv.timing)
	require.Equal(t, []string{dead}, sv.unreached)
	require.Less(t, took, time.Second, "the survey waited on a refused member")

	// 3 servers and a 4s session: a handshake timeout of 1s.
	c, took = surveyOf(t, 4*time.Second, a, b, silent)
	t.Logf("a silent member: the survey took %v (handshake timeout %v)", took.Round(time.Millisecond),
		HandshakeTimeout(4*time.Second, 3))
	sv = c.sv.Load()
	require.Equal(t, SourceConf, sv.source)
	require.Equal(t, told, sv.timing)
	require.Equal(t, []string{silent}, sv.unreached)
	require.Less(t, took, 1800*time.Millisecond, "a silent member held the survey two handshake timeouts")
}

// Issue 47: beside a standalone server, a dead or silent address left the
// timing unknown with a 900-character error whose first sentence named
// neither the address nor what it did. The first sentence is the cause
// (the address, refused or silent); what to do follows.
func TestUnknownErrNamesTheServerFirst(t *testing.T) {
	t.Parallel()
	standalone := fourLetterServer(t, map[string]string{
		"conf": confAnswer(2000, -1, 4000, 40000), "srvr": "Mode: standalone\n"})
	dead, silent := deadAddr(t), silentServer(t)
	for _, tc := range []struct{ addr, cause string }{
		{dead, "connection refused"},
		{silent, "no answer to 'srvr' within 1s"},
	} {
		c, _ := surveyOf(t, 4*time.Second, standalone, tc.addr)
		err := c.timingErr(c.sv.Load())
		require.ErrorIs(t, err, ErrTimingUnknown)
		msg := err.Error()
		first, _, _ := strings.Cut(msg, ". ")
		t.Logf("%d characters: %s", len(msg), msg)
		require.Equal(t, "zklock: ensemble timing unknown: "+tc.addr+" did not answer ("+tc.cause+")", first)
		require.Contains(t, msg, standalone+" is a standalone server")
		require.LessOrEqual(t, len(msg), 500)
	}
}
