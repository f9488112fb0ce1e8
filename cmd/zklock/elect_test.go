package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// Candidates run their command while leading, one after the other, and
// exit with its code; --observe prints each leader and then no leader.
func TestElectRunsWhileLeadingAndObserve(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "election")
	observer := start(t, servers, "elect", "--observe", "--json", path)
	eventually(t, 30*time.Second, "the observer to report no leader", func() bool {
		return strings.Contains(observer.out.String(), `"leader":false`)
	})
	ready := filepath.Join(t.TempDir(), "ready")
	alpha := start(t, servers, "elect", path, "alpha", "--", "sh", "-c", `echo ok > "$0"; exec sleep 60`, ready)
	eventually(t, 30*time.Second, "alpha to lead", func() bool { _, err := os.Stat(ready); return err == nil })
	beta := start(t, servers, "elect", path, "beta", "--", "sh", "-c", `sleep 0.5; exit 5`)
	r := awaitQueue(t, servers, path, 1, 1)
	// status and ls agree on what the path is (issue 47: status said
	// "lock"): an Election and a Mutex look alike on the wire.
	if r.Kind != lsMutexOrElection {
		t.Errorf("status --json: kind %q, want %q", r.Kind, lsMutexOrElection)
	}
	if code, out, _ := runZklock(t, servers, "status", path); code != 0 || !strings.HasPrefix(out, path+": mutex/election, 1 holding, 1 waiting\n") {
		t.Errorf("status: exit %d, output %q; want a mutex/election", code, out)
	}
	if code, out, _ := runZklock(t, servers, "ls", path); code != 0 || !strings.Contains(out, path+"  mutex/election ") {
		t.Errorf("ls: exit %d, output %q; want a mutex/election", code, out)
	}

	alpha.signal(t, syscall.SIGTERM)
	if code := alpha.wait(t, procTimeout); code != 128+int(syscall.SIGTERM) {
		t.Errorf("alpha: exit %d; stderr: %s", code, alpha.errOut.String())
	}
	if code := beta.wait(t, procTimeout); code != 5 {
		t.Errorf("beta: exit %d, want 5; stderr: %s", code, beta.errOut.String())
	}
	want := []string{"", "alpha", "beta", ""}
	eventually(t, 30*time.Second, "the observer to see alpha, beta, then no leader", func() bool {
		return len(leaders(t, observer.out.String())) >= len(want)
	})
	observer.signal(t, syscall.SIGINT)
	if code := observer.wait(t, procTimeout); code != 0 {
		t.Errorf("observer: exit %d after SIGINT; stderr: %s", code, observer.errOut.String())
	}
	if got := leaders(t, observer.out.String()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("observed leaders %q, want %q", got, want)
	}
	// The time it gives is the leader's node's creation, and says so
	// (issue 47: "since" read as when it became leader).
	if out := observer.out.String(); strings.Contains(out, `"since"`) || strings.Count(out, `"created":`) != 2 {
		t.Errorf("observe --json: want a created time per leader, and no since:\n%s", out)
	}
}

// leaders returns the values of the leaders in --observe --json output, ""
// for no leader.
func leaders(t *testing.T, out string) []string {
	t.Helper()
	var vals []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l leaderLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("observe line %q: %v", line, err)
		}
		vals = append(vals, l.Value)
	}
	return vals
}

// A leader cut off from ZooKeeper: its command gets SIGTERM and zklock
// exits exitLost.
func TestElectLostSendsSIGTERM(t *testing.T) {
	c := shared(t)
	p := zktest.NewProxy(t, c.Servers())
	file := filepath.Join(t.TempDir(), "log")
	leader := start(t, "", "elect", "--servers", strings.Join(p.Addrs(), ","), "--session-timeout", "2s",
		lockPath(t, "election"), "v", "--", "sh", "-c",
		`trap 'echo term >> "$0"; exit 0' TERM; echo start >> "$0"; while :; do sleep 0.05; done`, file)
	eventually(t, 30*time.Second, "the leader's command to start", func() bool { return len(readLines(t, file)) == 1 })
	p.Blackhole()
	if code := leader.wait(t, procTimeout); code != exitLost {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitLost, leader.errOut.String())
	}
	if got := strings.Join(readLines(t, file), " "); got != "start term" {
		t.Errorf("command wrote %q, want start, then term on SIGTERM; zklock's stderr: %s", got, leader.errOut.String())
	}
	// In an election's words (issue 47): it lost the leadership.
	if out := leader.errOut.String(); !strings.Contains(out, "zklock elect: lost the leadership of ") ||
		!strings.Contains(out, "zklock elect: the leadership of ") {
		t.Errorf("stderr does not speak of the leadership: %q", out)
	}
}

// Issue 47, a newcomer's pass: elect reported an election in a lock's
// words ("waiting for P: held by alpha", "P not acquired within 2s",
// "acquired P"). It speaks of leading, as ls names the path an election:
// a leader, candidates ahead, elected, not elected.
func TestElectSpeaksOfLeadership(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	servers, path := c.ConnectString(), lockPath(t, "election")
	ready := filepath.Join(t.TempDir(), "ready")
	alpha := start(t, servers, "elect", path, "alpha", "--", "sh", "-c", `echo ok > "$0"; exec sleep 60`, ready)
	eventually(t, 30*time.Second, "alpha to lead", func() bool { _, err := os.Stat(ready); return err == nil })
	gamma := start(t, servers, "elect", path, "gamma", "--", "true")
	awaitQueue(t, servers, path, 1, 1)

	code, _, beta := runZklock(t, servers, "elect", "--timeout", "2s", path, "beta", "--", "true")
	q := regexp.QuoteMeta(path)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^zklock elect: waiting to lead ` + q + `: led by alpha \(session 0x[0-9a-f]+\), 1 candidate ahead$`),
		regexp.MustCompile(`(?m)^zklock elect: not elected leader of ` + q + ` within 2s$`),
	} {
		if !want.MatchString(beta) {
			t.Errorf("beta: stderr %q lacks %s", beta, want)
		}
	}
	if code != exitTimeout {
		t.Errorf("beta: exit %d, want %d", code, exitTimeout)
	}
	alpha.signal(t, syscall.SIGTERM)
	alpha.wait(t, procTimeout)
	if code := gamma.wait(t, procTimeout); code != 0 {
		t.Errorf("gamma: exit %d; stderr %s", code, gamma.errOut.String())
	}
	elected := regexp.MustCompile(`(?m)^zklock elect: elected leader of ` + q + ` after \S+ \(token \d+\)$`)
	if out := gamma.errOut.String(); !elected.MatchString(out) {
		t.Errorf("gamma: stderr %q lacks %s", out, elected)
	}
	for name, out := range map[string]string{"beta": beta, "gamma": gamma.errOut.String()} {
		for _, lockWord := range []string{"held by", "acquired", "waiting for", "waiting ahead"} {
			if strings.Contains(out, lockWord) {
				t.Errorf("%s: stderr says %q of an election: %q", name, lockWord, out)
			}
		}
	}
}
