package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Bad flags and missing arguments are usage errors (exit 2) reported on one
// line of stderr, before anything is sent to ZooKeeper: these run in
// process, with no server.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"run"},
		{"run", "/p"},
		{"run", "/p", "--"},
		{"run", "--bogus", "/p", "--", "true"},
		{"run", "/p", "--bogus", "--", "true"},
		{"run", "-n", "0", "/p", "--", "true"},
		{"run", "-n", "2", "--shared", "/p", "--", "true"},
		{"run", "--queue", "/p", "--", "true"},
		{"run", "--shared", "--write", "/p", "--", "true"},
		{"run", "--try", "--timeout", "1s", "/p", "--", "true"},
		{"run", "--timeout", "soon", "/p", "--", "true"},
		{"run", "--grace", "-1s", "/p", "--", "true"},
		{"run", "-n", "2", "--revocable", "/p", "--", "true"},
		{"elect", "--revocable", "/p", "v", "--", "true"},
		{"status"},
		{"status", "/a", "/b"},
		{"status", "--kind", "queue", "/p"},
		{"status", "--watch"},
		{"ls"},
		{"ls", "/a", "/b"},
		{"revoke"},
		{"revoke", "/a", "/b"},
		{"break"},
		{"break", "--bogus", "/p"},
		{"break", "/a", "/b"},
		{"ls", "relative"},
		{"ls", "/trailing/"},
		{"ls", ""},
		{"ls", "/zookeeper"},
		{"ls", "--max-nodes", "0", "/p"},
		{"ls", "--timeout", "0s", "/p"},
		{"elect", "/p"},
		{"elect", "/p", "value"},
		{"elect", "--observe"},
		{"dev-server", "extra"},
		{"help", "bogus"},
		// Issue 35, item 6: flags that do not apply are refused, before
		// or after PATH alike.
		{"elect", "--observe", "--grace", "1s", "/p"},
		{"elect", "--observe", "/p", "--grace", "1s"},
		{"elect", "--observe", "--timeout", "1s", "/p"},
		{"elect", "--observe", "--exit-code-file", "f", "/p"},
		{"elect", "--json", "/p", "v", "--", "true"},
		{"status", "/p", "--bogus"},
		{"status", "/p", "--kind", "queue"},
		{"ls", "/p", "--max-nodes", "0"},
		{"break", "/p", "--bogus"},
		{"revoke", "/p", "--force"},
		{"run", "--quiet", "--grace", "-1s", "/p", "--", "true"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(args, &out, &errOut); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, errOut.String())
			}
			if len(args) > 0 && strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", errOut.String())
			}
			if !strings.HasPrefix(errOut.String(), "zklock") || out.Len() != 0 {
				t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
			}
		})
	}
}

// Issue 35, item 6: -n was a semaphore's limit in run and a number of
// servers in dev-server; dev-server's is now --size, and the old spelling
// says so.
func TestDevServerOldFlagNamesTheNewOne(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"dev-server", "-n", "3"}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--size") {
		t.Errorf("dev-server -n 3: exit %d, stderr %q; want %d and a message naming --size", code, errOut.String(), exitUsage)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "--help"}, {"help", "-h"}, {"help", "run"}, {"run", "-h"}, {"status", "--help"}, {"help", "ls"}, {"ls", "-h"}, {"help", "revoke"}, {"help", "break"}, {"break", "-h"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != exitOK || errOut.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
		if !strings.Contains(out.String(), "Usage") {
			t.Errorf("%v: no usage in %q", args, out.String())
		}
	}
	var out bytes.Buffer
	run([]string{"help"}, &out, &out)
	for _, code := range []string{"122", "123", "124", "125", "126", "127", "128+N"} {
		if !strings.Contains(out.String(), "\n  "+code+" ") {
			t.Errorf("help does not document exit code %s", code)
		}
	}
}

// The binary exits 2 too, and also for a path ZooKeeper would refuse,
// which is checked once connected.
func TestUsageErrorsFromBinary(t *testing.T) {
	c := shared(t)
	for _, args := range [][]string{
		{"run", "--bogus", "/p", "--", "true"},
		{"run", "relative/path", "--", "true"},
		{"status", "/trailing/"},
		{"revoke", "relative"},
		{"break", "/trailing/"},
	} {
		code, _, errOut := runZklock(t, c.ConnectString(), args...)
		if code != exitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, want %d; stderr: %q", args, code, exitUsage, errOut)
		}
	}
}

// Issue 47: help printed "-flag" where the docs write "--flag". Every flag
// of every command's help is "--name", but for the one-letter -n.
func TestHelpPrintsDoubleDashFlags(t *testing.T) {
	for name := range commandHelp {
		var out, errOut bytes.Buffer
		if code := run([]string{"help", name}, &out, &errOut); code != exitOK {
			t.Fatalf("help %s: exit %d, stderr %q", name, code, errOut.String())
		}
		flags := 0
		for _, l := range strings.Split(out.String(), "\n") {
			if !strings.HasPrefix(l, "  -") {
				continue
			}
			flags++
			f := strings.Fields(l)[0]
			if one := len(strings.TrimLeft(f, "-")) == 1; (one && f[:2] == "--") || (!one && !strings.HasPrefix(f, "--")) {
				t.Errorf("help %s: %q; want --name (or -n for a one-letter name)", name, l)
			}
		}
		if flags == 0 {
			t.Errorf("help %s lists no flag:\n%s", name, out.String())
		}
	}
	// The flag package's own errors name flags its way ("-bogus"): they
	// are given as the docs write them.
	for args, want := range map[string]string{
		"run --bogus /p -- true":          "flag provided but not defined: --bogus ",
		"run --timeout soon /p -- true":   `invalid value "soon" for flag --timeout: `,
		"run /p --connect-timeout":        "flag needs an argument: --connect-timeout ",
		"run --try=maybe /p -- true":      `invalid boolean value "maybe" for --try: `,
		"run -n x /p -- true":             `invalid value "x" for flag -n: `,
		"status --kind=queue --json /p":   `--kind "queue": want auto, mutex, rwmutex or semaphore `,
		"elect --observe --grace 1s /p":   "--grace does not apply to --observe ",
		"run --shared --write /p -- true": "--shared and --write exclude each other ",
		"ls --max-nodes 0 /p":             "--max-nodes and --timeout must be positive ",
		"dev-server --bogus":              "flag provided but not defined: --bogus ",
		"break --force=2 /p":              `invalid boolean value "2" for --force: `,
		"run -n 2 --revocable /p -- true": "--revocable applies to a lock or a reader/writer lock",
		"run --revocable=yes /p -- true":  `invalid boolean value "yes" for --revocable: `,
		"status --watch=1x /p":            `invalid boolean value "1x" for --watch: `,
		"revoke --session-timeout 1 /p":   `invalid value "1" for flag --session-timeout: `,
		"run --exit-code-file /p -- true": "missing command",
		"elect /p v --json -- true":       "--json does not apply without --observe ",
		"run --queue /p -- true":          "--queue is a semaphore's layout: give -n with the limit ",
		"status --kind lock --bogus=1 /p": "flag provided but not defined: --bogus ",
	} {
		var out, errOut bytes.Buffer
		if code := run(strings.Fields(args), &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", args, code, errOut.String(), exitUsage, want)
		}
	}

	var out bytes.Buffer
	run([]string{"help", "run"}, &out, &out)
	for _, want := range []string{"\n  --connect-timeout duration\n", "(default 15s)", "\n  -n K\n", "\n  --try\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help run has no %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	run([]string{"help", "status"}, &out, &out)
	if !strings.Contains(out.String(), `(default "auto")`) {
		t.Errorf("help status does not give --kind's default:\n%s", out.String())
	}
}

// Issue 47, a newcomer's pass: make's exit 2 in docs/cli.md's example read
// as zklock's usage error. The exit-code tables of the help and of
// docs/cli.md say that a command's own code, a failure's too, is passed
// on as it is, and name what tells a command's 2 from zklock's.
func TestExitCodeTablesTellTheCommandsCode(t *testing.T) {
	var out bytes.Buffer
	run([]string{"help"}, &out, &out)
	row := regexp.MustCompile(`(?m)^  N +the command's own exit code, passed on as it is, a failure too[^\n]*\n[^\n]*--exit-code-file tells a command's 2 from zklock's`)
	if !row.MatchString(out.String()) {
		t.Errorf("help's exit code N does not say a failing command's code is passed on, nor what tells its 2 from zklock's:\n%s", out.String())
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile("(?m)^\\| N \\| the command ran and exited N: zklock passes the command's own code on as it is, a failure too .*`--exit-code-file`").Match(doc) {
		t.Error("docs/cli.md's exit code N does not say a failing command's code is passed on, nor point to --exit-code-file")
	}
}
