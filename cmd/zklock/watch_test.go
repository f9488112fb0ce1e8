package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// status --watch prints each state the lock goes through, once: as blocks
// separated by blank lines when stdout is not a terminal, as JSON lines
// with --json; SIGINT stops it with exit 0.
func TestStatusWatchPrintsEachChange(t *testing.T) {
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	text := start(t, servers, "status", "--watch", path)
	jsonl := start(t, servers, "status", "--watch", "--json", path)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("text:\n%s\njson:\n%s\nstderr: %q %q", text.out.String(), jsonl.out.String(), text.errOut.String(), jsonl.errOut.String())
		}
	})
	seen := func(n int) {
		t.Helper()
		eventually(t, 30*time.Second, fmt.Sprintf("state %d in both outputs", n), func() bool {
			return strings.Count(text.out.String(), "\n\n") == n-1 && strings.Count(jsonl.out.String(), "\n") == n
		})
	}
	seen(1) // free
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	defer cancel()
	s := newSession(t, servers)
	first := must2(zklock.NewMutex(s, path, zklock.WithData([]byte("first"))))(t)
	check(t, first.Lock(ctx))
	seen(2)
	second := must2(zklock.NewMutex(s, path, zklock.WithData([]byte("second"))))(t)
	locked := make(chan error, 1)
	go func() { locked <- second.Lock(ctx) }()
	seen(3)
	check(t, first.Unlock(ctx))
	check(t, <-locked)
	seen(4)
	check(t, second.Unlock(ctx))
	seen(5)

	for _, p := range []*proc{text, jsonl} {
		p.signal(t, syscall.SIGINT)
		if code := p.wait(t, procTimeout); code != exitOK || p.errOut.String() != "" {
			t.Errorf("%v: exit %d after SIGINT, stderr %q", p.cmd.Args[1:], code, p.errOut.String())
		}
	}
	want := []string{
		path + ": free, nobody waiting",
		path + ": mutex, 1 holding, 0 waiting holder first",
		path + ": mutex, 1 holding, 1 waiting holder first waiting second",
		path + ": mutex, 1 holding, 0 waiting holder second",
		path + ": free, nobody waiting",
	}
	out := text.out.String()
	if strings.Contains(out, "\033") {
		t.Errorf("escape sequences in output to a pipe: %q", out)
	}
	blocks := strings.Split(strings.TrimSpace(out), "\n\n")
	for i, b := range blocks {
		lines := strings.Split(b, "\n") // a time, the title, then the table
		got := lines[1]
		for _, row := range lines[min(3, len(lines)):] {
			f := strings.Fields(row)
			got += " " + f[1] + " " + f[5]
		}
		if i >= len(want) || got != want[i] {
			t.Errorf("block %d:\n%s\nwant %q", i+1, b, want[min(i, len(want)-1)])
		}
	}
	var states []string
	for _, line := range strings.Split(strings.TrimSpace(jsonl.out.String()), "\n") {
		var r report
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("--watch --json line %q: %v", line, err)
		}
		state := r.Kind
		for _, e := range append(r.Holders, r.Waiting...) {
			state += " " + e.Role + ":" + e.Data
		}
		states = append(states, state)
	}
	wantJSON := " | mutex holder:first | mutex holder:first waiting:second | mutex holder:second | "
	if got := strings.Join(states, " | "); got != wantJSON {
		t.Errorf("--watch --json states %q, want %q", got, wantJSON)
	}
}
