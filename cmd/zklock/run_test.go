package main

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Children of concurrent 'zklock run' on one path append "start ID T" and
// "end ID T" lines to one file; the intervals must not overlap.
func TestRunExcludes(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	file := filepath.Join(t.TempDir(), "log")
	const workers = 4
	procs := make([]*proc, workers)
	for i := range procs {
		script := `echo start $1 $(date +%s%N) >> "$2"; sleep 0.2; echo end $1 $(date +%s%N) >> "$2"`
		procs[i] = start(t, servers, "run", path, "--", "sh", "-c", script, "sh", strconv.Itoa(i), file)
	}
	for i, p := range procs {
		if code := p.wait(t, procTimeout); code != 0 {
			t.Fatalf("worker %d: exit %d; stderr: %s", i, code, p.errOut.String())
		}
	}
	checkNoOverlap(t, parseStamped(t, readLines(t, file)), workers)
}

func checkNoOverlap(t *testing.T, lines []stamped, n int) {
	t.Helper()
	starts, ends := map[string]int64{}, map[string]int64{}
	for _, l := range lines {
		map[string]map[string]int64{"start": starts, "end": ends}[l.what][l.id] = l.at
	}
	if len(starts) != n || len(ends) != n {
		t.Fatalf("want %d starts and ends, got %v", n, lines)
	}
	ids := make([]string, 0, n)
	for id := range starts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return starts[ids[i]] < starts[ids[j]] })
	for i := 1; i < len(ids); i++ {
		prev, cur := ids[i-1], ids[i]
		if ends[prev] > starts[cur] {
			t.Errorf("worker %s started at %d before worker %s ended at %d", cur, starts[cur], prev, ends[prev])
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	c := shared(t)
	notExec := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv []string
		want int
	}{
		{"zero", []string{"true"}, 0},
		{"seven", []string{"sh", "-c", "exit 7"}, 7},
		{"255", []string{"sh", "-c", "exit 255"}, 255},
		{"killed by SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, 128 + 15},
		{"not found", []string{"zklock-no-such-command"}, exitNotFound},
		{"not executable", []string{notExec}, exitNoExec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", lockPath(t, "lock"), "--"}, tc.argv...)
			if code, _, errOut := runZklock(t, c.ConnectString(), args...); code != tc.want {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.want, errOut)
			}
		})
	}
}

func TestRunEnvironment(t *testing.T) {
	t.Parallel()
	c := shared(t)
	path := lockPath(t, "lock")
	code, out, errOut := runZklock(t, c.ConnectString(), "run", path, "--", "sh", "-c",
		`echo "$ZKLOCK_PATH $ZKLOCK_HELD $ZKLOCK_TOKEN $ZKLOCK_NODE"`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f := strings.Fields(out)
	if len(f) != 4 || f[0] != path || f[1] != "1" || !strings.HasPrefix(f[3], path+"/") {
		t.Fatalf("child saw %q", out)
	}
	if tok, err := strconv.ParseInt(f[2], 10, 64); err != nil || tok <= 0 {
		t.Errorf("ZKLOCK_TOKEN %q: want a positive zxid", f[2])
	}
}

// holdLock starts 'zklock run' whose child signals readiness in a file and
// then sleeps (exec'd, so that signals forwarded to the child reach sleep).
func holdLock(t *testing.T, servers, path string, extra ...string) *proc {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	args := append(append([]string{"run"}, extra...), path, "--", "sh", "-c", `echo ok > "$0"; exec sleep 60`, ready)
	p := start(t, servers, args...)
	eventually(t, 30*time.Second, "the holder's child to start", func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	return p
}

func TestRunTryTimeoutAndSignals(t *testing.T) {
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	holder := holdLock(t, servers, path)

	// --try refuses with one line, as docs/cli.md's transcript has it: it
	// never says it waits (4 runs: the waiting line came from a watch that
	// raced the refusal).
	for range 4 {
		code, out, errOut := runZklock(t, servers, "run", "--try", path, "--", "true")
		want := "zklock run: " + path + " is held by "
		if code != exitBusy || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("--try: exit %d, stdout %q, stderr %q; want exit %d and one line %q...", code, out, errOut, exitBusy, want)
		}
	}
	if code, _, errOut := runZklock(t, servers, "run", "--timeout", "300ms", path, "--", "true"); code != exitTimeout {
		t.Errorf("--timeout: exit %d, want %d; stderr: %s", code, exitTimeout, errOut)
	}
	// A waiter interrupted while it waits exits 128+SIGINT and leaves no node.
	waiter := start(t, servers, "run", path, "--", "true")
	awaitQueue(t, servers, path, 1, 1)
	waiter.signal(t, syscall.SIGINT)
	if code := waiter.wait(t, procTimeout); code != 128+int(syscall.SIGINT) {
		t.Errorf("interrupted waiter: exit %d, want %d; stderr: %s", code, 128+int(syscall.SIGINT), waiter.errOut.String())
	}
	// It names the signal as kill(1) does (it said "interrupted by interrupt").
	if want := "zklock run: interrupted by SIGINT while waiting for " + path + "; nothing was run\n"; !strings.HasSuffix(waiter.errOut.String(), want) {
		t.Errorf("interrupted waiter: stderr %q, want it to end with %q", waiter.errOut.String(), want)
	}
	awaitQueue(t, servers, path, 1, 0)
	// SIGTERM to zklock is passed on to its child, whose exit code it reports.
	holder.signal(t, syscall.SIGTERM)
	if code := holder.wait(t, procTimeout); code != 128+int(syscall.SIGTERM) {
		t.Errorf("holder: exit %d, want %d; stderr: %s", code, 128+int(syscall.SIGTERM), holder.errOut.String())
	}
	awaitQueue(t, servers, path, 0, 0)
}
