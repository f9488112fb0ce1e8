package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// Issue 35, item 6: every subcommand takes its flags before or after its
// PATH alike.
func TestFlagsAfterPath(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout
	}{
		{[]string{"status", path, "--json"}, exitOK, `"path": "` + path + `"`},
		{[]string{"ls", "/zklock-cmd-test", "--json"}, exitOK, "["},
		{[]string{"revoke", path, "--connect-timeout", "10s"}, exitError, ""},
		{[]string{"break", path, "--force"}, exitError, ""},
		{[]string{"run", path, "--data", "x", "--", "echo", "ran"}, exitOK, "ran"},
	} {
		code, out, errOut := runZklock(t, servers, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("%v: exit %d, stdout %q; want %d and %q; stderr: %q", tc.args, code, out, tc.code, tc.out, errOut)
		}
	}
	observer := start(t, servers, "elect", "--observe", path, "--json")
	eventually(t, 30*time.Second, "the observer's first line", func() bool {
		var l leaderLine
		line, _, ok := strings.Cut(observer.out.String(), "\n")
		return ok && json.Unmarshal([]byte(line), &l) == nil
	})
	observer.signal(t, syscall.SIGINT)
	if code := observer.wait(t, procTimeout); code != 0 {
		t.Errorf("elect --observe PATH --json: exit %d; stderr: %s", code, observer.errOut.String())
	}
}

// Issue 35, item 6: --exit-code-file tells the command's exit code from
// zklock's own: it holds the command's code once the command has run, and
// nothing when it did not. Issue 47: make exits 2 for a failed build, as
// zklock does for a usage error; a usage error left a FILE of an earlier
// run as it was, so it empties FILE too (once it has read the flag).
func TestExitCodeFile(t *testing.T) {
	c := shared(t)
	for _, tc := range []struct {
		name  string
		flags []string // after --exit-code-file
		argv  []string
		code  int
		file  string
	}{
		{"the command's 123", nil, []string{"sh", "-c", "exit 123"}, 123, "123\n"},
		{"the command's 127", nil, []string{"sh", "-c", "exit 127"}, 127, "127\n"},
		{"not found", nil, []string{"zklock-no-such-command"}, exitNotFound, ""},
		{"killed by a signal", nil, []string{"sh", "-c", "kill -TERM $$"}, 128 + 15, "143\n"},
		{"the command's 2, as make's", nil, []string{"sh", "-c", "exit 2"}, 2, "2\n"},
		{"an unknown flag", []string{"--bogus"}, []string{"true"}, exitUsage, ""},
		{"a bad flag value", []string{"--grace", "-1s"}, []string{"true"}, exitUsage, ""},
		{"a grace not below the margin", []string{"--session-timeout", "10s", "--grace", "3s"}, []string{"true"}, exitUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "code")
			if err := os.WriteFile(file, []byte("stale\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"run", "--exit-code-file", file}, tc.flags...), lockPath(t, "lock"), "--")
			args = append(args, tc.argv...)
			code, _, errOut := runZklock(t, c.ConnectString(), args...)
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || string(got) != tc.file {
				t.Errorf("exit %d, file %q; want %d and %q; stderr: %s", code, got, tc.code, tc.file, errOut)
			}
		})
	}
}
