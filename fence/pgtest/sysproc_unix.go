//go:build unix

package pgtest

import (
	"os"
	"syscall"
)

// sysProcAttr runs a command as a (nil: as ourselves) and, on Linux, asks
// the kernel to kill it if the test binary dies first (a panic or a go test
// -timeout), so that no server outlives its test. Go sets the parent-death
// signal after switching the credentials, which would clear it.
func sysProcAttr(a *account) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{}
	setDeathSignal(attr)
	if a != nil {
		attr.Credential = &syscall.Credential{Uid: a.uid, Gid: a.gid}
	}
	return attr
}

// chown gives path to a (nil: leaves it alone).
func chown(path string, a *account) error {
	if a == nil {
		return nil
	}
	return os.Chown(path, int(a.uid), int(a.gid))
}
