//go:build !unix

package pgtest

import (
	"errors"
	"syscall"
)

func sysProcAttr(*account) *syscall.SysProcAttr { return nil }

func chown(string, *account) error { return errors.New("pgtest: unsupported platform") }
