package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// Issue 47, a newcomer's pass: --servers with a member that accepts and
// never answers failed at --connect-timeout with "cannot connect to
// LIVE,SILENT within 15s" and no cause (the session was up on the live
// server; the survey of the servers' timing still waited on the silent
// one). The failure names the member and what it did: at once when the
// survey gives it up (beside a standalone server it leaves the timing
// unknown), and at --connect-timeout when that comes first.
func TestConnectNamesASilentMember(t *testing.T) {
	t.Parallel()
	live, silent := zktest.Start(t).ConnectString(), silentServer(t)
	servers := live + "," + silent
	named := regexp.MustCompile(regexp.QuoteMeta(silent) + ` did not answer[^(]*\((no answer|connection)`)
	for _, tc := range []struct {
		connectTimeout string
		want           *regexp.Regexp
	}{
		// A handshake timeout of 2s for 2 servers and an 8s session: the
		// survey gives the silent member up after 2s.
		{"20s", regexp.MustCompile(`(?m)^zklock status: ensemble timing unknown: ` + named.String())},
		{"1500ms", regexp.MustCompile(`(?m)^zklock status: cannot connect to ` + regexp.QuoteMeta(servers) +
			` within 1.5s: ` + named.String())},
	} {
		began := time.Now()
		code, _, errOut := runZklock(t, servers, "status", "--session-timeout", "8s",
			"--connect-timeout", tc.connectTimeout, "/p")
		took := time.Since(began)
		t.Logf("--connect-timeout %s: exit %d after %v: %q", tc.connectTimeout, code, took.Round(time.Millisecond), errOut)
		if code != exitError || !tc.want.MatchString(errOut) {
			t.Errorf("--connect-timeout %s: exit %d, stderr %q; want %d and %s", tc.connectTimeout, code, errOut,
				exitError, tc.want)
		}
		if took > 8*time.Second {
			t.Errorf("--connect-timeout %s: took %v", tc.connectTimeout, took)
		}
	}
}
