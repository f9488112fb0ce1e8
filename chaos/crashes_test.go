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

// Every race and panic counts, a race inside the ZooKeeper client as any
// other: the client is zklock's own.
func TestCrashes(t *testing.T) {
	out := "starting\n" +
		race("github.com/zklock/zklock/internal/client.(*reader).packet()", "github.com/zklock/zklock/internal/client.release()") +
		race("github.com/zklock/zklock.(*Session).observe()", "github.com/zklock/zklock/internal/client.(*reader).run()") +
		"Found 2 data race(s)\npanic: boom\n"
	ours := chaos.Crashes("w1.1", out)
	all := strings.Join(ours, "\n")
	if len(ours) != 3 || !strings.Contains(all, "(*reader).packet") || !strings.Contains(all, "zklock.(*Session).observe") ||
		!strings.Contains(all, "panic: boom") {
		t.Errorf("ours = %q, want both races and the panic", ours)
	}
	if ours := chaos.Crashes("w1.1", "all fine\n"); ours != nil {
		t.Errorf("clean output: %q", ours)
	}
}
