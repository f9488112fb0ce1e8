package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// A holder cut off from ZooKeeper: its child gets SIGTERM (and writes a
// "term" line) before the session expires and the next 'zklock run'
// acquires (its child writes a "start" line); the cut-off zklock exits
// exitLost.
func TestRunLostSendsSIGTERMBeforeNextHolder(t *testing.T) {
	c := shared(t)
	p := zktest.NewProxy(t, c.Servers())
	path := lockPath(t, "lock")
	file := filepath.Join(t.TempDir(), "log")
	codeFile := filepath.Join(t.TempDir(), "code")

	first := start(t, "", "run", "--servers", strings.Join(p.Addrs(), ","), "--session-timeout", "2s",
		"--exit-code-file", codeFile, path, "--", "sh", "-c",
		`trap 'echo term 1 $(date +%s%N) >> "$0"; exit 0' TERM
		echo start 1 $(date +%s%N) >> "$0"
		while :; do sleep 0.05; done`, file)
	eventually(t, 30*time.Second, "the first child to start", func() bool { return len(readLines(t, file)) == 1 })
	second := start(t, c.ConnectString(), "run", path, "--", "sh", "-c",
		`echo start 2 $(date +%s%N) >> "$0"`, file)
	awaitQueue(t, c.ConnectString(), path, 1, 1)

	p.Blackhole()
	if code := first.wait(t, procTimeout); code != exitLost {
		t.Errorf("cut-off zklock: exit %d, want %d; stderr: %s", code, exitLost, first.errOut.String())
	}
	if got, err := os.ReadFile(codeFile); err != nil || string(got) != "0\n" {
		t.Errorf("--exit-code-file: %q, %v; want the command's own 0", got, err)
	}
	if code := second.wait(t, procTimeout); code != 0 {
		t.Fatalf("second zklock: exit %d; stderr: %s", code, second.errOut.String())
	}
	lines := parseStamped(t, readLines(t, file))
	if len(lines) != 3 || lines[1].what != "term" || lines[2].what != "start" || lines[2].id != "2" {
		t.Fatalf("want start 1, term 1, start 2; got %v", lines)
	}
	if lines[1].at >= lines[2].at {
		t.Errorf("SIGTERM handled at %d, not before the next holder started at %d", lines[1].at, lines[2].at)
	}
	t.Logf("SIGTERM handled %v before the next holder started",
		time.Duration(lines[2].at-lines[1].at).Round(time.Millisecond))
}

// A loss zklock finds sends the command one SIGTERM, zklock's own: its
// supervisor, told "lost", does not send a second (many commands take a
// second SIGTERM for "stop now, without cleaning up"). The counting
// command tells two signals a millisecond apart from one.
func TestRunLostSendsOneSIGTERM(t *testing.T) {
	c := shared(t)
	p := zktest.NewProxy(t, c.Servers())
	argv, file := sigCounter(t)
	first := start(t, "", append([]string{"run", "--servers", strings.Join(p.Addrs(), ","), "--session-timeout", "2s",
		lockPath(t, "lock"), "--"}, argv...)...)
	eventually(t, 30*time.Second, "the command to start", func() bool { return strings.Contains(first.out.String(), "ready") })
	p.Blackhole()
	if code := first.wait(t, procTimeout); code != exitLost {
		t.Errorf("cut-off zklock: exit %d, want %d; stderr: %s", code, exitLost, first.errOut.String())
	}
	if got := readLines(t, file); strings.Join(got, ",") != "terminated" {
		t.Errorf("the command got %q, want one SIGTERM", got)
	}
}
