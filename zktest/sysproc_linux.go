package zktest

import "syscall"

// sysProcAttr asks Linux to kill a server if the test binary dies first (a
// panic or a go test -timeout), so no JVM outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
