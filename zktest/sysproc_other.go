//go:build !linux

package zktest

import "syscall"

// sysProcAttr has nothing to add outside Linux: a server whose test binary
// dies is left running there.
func sysProcAttr() *syscall.SysProcAttr { return nil }
