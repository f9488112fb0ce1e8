package main

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/zklock/zklock/zktest"
)

// devServer starts a throwaway standalone ZooKeeper from the local
// installation, the one the tests use (zktest finds it), and returns its
// address and a function that stops it and removes its files. The server is
// killed with this process should it die first.
//
// zktest's launcher reports through a testing.TB; devTB is a minimal one for
// a program: Fatal aborts the start with an error instead of a test.
func devServer() (addrs []string, stop func(), err error) {
	tb := &devTB{}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(devFatal)
			if !ok {
				panic(r)
			}
			tb.cleanup()
			addrs, stop, err = nil, nil, f
		}
	}()
	c := zktest.Start(tb)
	return c.Servers(), tb.cleanup, nil
}

type devFatal string

func (f devFatal) Error() string { return string(f) }

// devTB implements the part of testing.TB that zktest uses. The embedded
// interface is nil: any other method panics, which zktest never calls.
type devTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func (*devTB) Helper()                     {}
func (*devTB) Logf(string, ...any)         {}
func (t *devTB) Fatal(args ...any)         { t.fail(); panic(devFatal(fmt.Sprint(args...))) }
func (t *devTB) Fatalf(f string, a ...any) { t.fail(); panic(devFatal(fmt.Sprintf(f, a...))) }
func (t *devTB) Errorf(f string, a ...any) { t.fail(); fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (t *devTB) Failed() bool              { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }
func (t *devTB) fail()                     { t.mu.Lock(); t.failed = true; t.mu.Unlock() }
func (t *devTB) Cleanup(f func())          { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }

func (t *devTB) TempDir() string {
	dir, err := os.MkdirTemp("", "zklock-leader-example-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// cleanup runs the cleanups, last registered first, as testing does.
func (t *devTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
