//go:build !unix

package zktest

import "os"

// tryLockFile reserves nothing outside Unix: the listen check alone keeps
// a port free.
func tryLockFile(f *os.File) bool { return true }

func unlockFile(f *os.File) {}
