package chaos_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/chaos"
	"github.com/zklock/zklock/zktest"
)

// A worker whose log cannot be written stops with the error at once,
// rather than leaving the checker a history with holes in it (its exit
// status then fails the run: "ended unexpectedly"). Its log is /dev/full,
// where every write fails with ENOSPC.
func TestWorkerFailsOnLogError(t *testing.T) {
	c := zktest.Start(t)
	log := filepath.Join(t.TempDir(), "w1.1.jsonl")
	if err := os.Symlink("/dev/full", log); err != nil {
		t.Fatal(err)
	}
	stop, keep := io.Pipe() // never closed until the end: only the error can stop the worker
	defer keep.Close()
	cfg := chaos.WorkerConfig{Proc: "w1.1", Addrs: c.Servers(), LogPath: log, Paths: chaos.Paths{Root: "/logerr"}, Seed: 1, Limit: 2,
		Session: chaos.SessionTimeout}
	start := time.Now()
	err := chaos.RunWorker(cfg, stop, time.Minute)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "w1.1: log") {
		t.Fatalf("RunWorker = %v, want the log's ENOSPC", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("stopped %v after the first failed write, want at once", d)
	}
}
