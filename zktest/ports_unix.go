//go:build unix

package zktest

import (
	"os"
	"syscall"
)

// tryLockFile takes an exclusive lock on f without waiting; the kernel
// drops it when the process exits, however it exits.
func tryLockFile(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
