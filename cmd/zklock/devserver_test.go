package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// dev-server prints ZK_SERVERS=addr, serves until SIGINT, then stops.
func TestDevServer(t *testing.T) {
	t.Parallel()
	dev := start(t, "", "dev-server")
	var servers string
	eventually(t, 60*time.Second, "dev-server to print its address", func() bool {
		line, _, _ := strings.Cut(dev.out.String(), "\n")
		var ok bool
		servers, ok = strings.CutPrefix(line, "ZK_SERVERS=")
		return ok
	})
	if code, out, errOut := runZklock(t, servers, "run", "/dev-server-test", "--", "echo", "held"); code != 0 || out != "held\n" {
		t.Errorf("run against the dev server: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	dev.signal(t, syscall.SIGINT)
	if code := dev.wait(t, procTimeout); code != 0 {
		t.Errorf("dev-server: exit %d after SIGINT; stderr: %s", code, dev.errOut.String())
	}
	if code, _, errOut := runZklock(t, servers, "status", "--connect-timeout", "1s", "/x"); code != exitError {
		t.Errorf("status after the dev server stopped: exit %d, want %d; stderr: %s", code, exitError, errOut)
	}
}
