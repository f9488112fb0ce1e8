//go:build unix

package client_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used:
// the client's own cost, since the server runs in another process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
