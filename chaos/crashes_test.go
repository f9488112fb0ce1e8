package chaos_test

import (
	"strings"
	"testing"

	"github.com/zklock/zklock/chaos"
)

// race is a race detector report with the two given innermost frames.
func race(a, b string) string {
	return "==================\nWARNING: DATA RACE\nRead at 0x00c0000da600 by goroutine 12:\n  " + a +
		"\n      /x.go:1 +0x1\n\nPrevious write at 0x00c0000da600 by goroutine 9:\n  " + b +
		"\n      /y.go:2 +0x2\n\nGoroutine 12 (running) created at:\n  main.main()\n==================\n"
}

func TestCrashes(t *testing.T) {
	out := "starting\n" +
		race("github.com/go-zookeeper/zk.(*Conn).sendSetWatches()", "github.com/go-zookeeper/zk.(*Conn).recvLoop()") +
		race("github.com/zklock/zklock.(*Session).observe()", "github.com/go-zookeeper/zk.(*Conn).recvLoop()") +
		"Found 2 data race(s)\npanic: boom\n"
	ours, upstream := chaos.Crashes("w1.1", out)
	if len(upstream) != 1 || !strings.Contains(upstream[0], "sendSetWatches") {
		t.Errorf("upstream = %q, want the go-zookeeper race only", upstream)
	}
	if len(ours) != 2 || !strings.Contains(strings.Join(ours, "\n"), "zklock.(*Session).observe") ||
		!strings.Contains(strings.Join(ours, "\n"), "panic: boom") {
		t.Errorf("ours = %q, want the panic and the race touching zklock", ours)
	}
	if ours, upstream := chaos.Crashes("w1.1", "all fine\n"); ours != nil || upstream != nil {
		t.Errorf("clean output: %q, %q", ours, upstream)
	}
}
