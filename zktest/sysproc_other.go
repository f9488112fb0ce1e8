//go:build !linux

package zktest

import (
	"syscall"
	"time"
)

// sysProcAttr has nothing to add outside Linux: a server whose test binary
// dies is left running there.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// waitStopped cannot see thread states outside Linux: a server may answer
// a request sent just after Pause returns.
func waitStopped(pid int, limit time.Duration) error { return nil }
