//go:build review

package zklock_test

import (
	"context"
	"testing"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// guardWrites and dataNode are review48_test.go's.

// Issue 48, second review (r48b): attacks that BROKE a claim. Behind the
// build tag "review" so that make test stays green; run with
// go test -tags review -run TestReview48bBreak_ .

// TestReview48bBreak_ZeroHandles shows (misuse, not bad input: handles
// are made by their constructors, which their docs name): the zero value
// of every exported handle type, and a nil one, panics on its first
// blocking call instead of returning an error of the misuse group.
func TestReview48bBreak_ZeroHandles(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"zero Mutex.Lock":        func() error { var m zklock.Mutex; return m.Lock(ctx) },
		"nil Mutex.Lock":         func() error { var m *zklock.Mutex; return m.Lock(ctx) },
		"zero Election.Campaign": func() error { var e zklock.Election; _, err := e.Campaign(ctx, nil); return err },
		"zero MultiLock.Lock":    func() error { var m zklock.MultiLock; return m.Lock(ctx) },
		"zero Lease.Release":     func() error { var l zklock.Lease; return l.Release(ctx) },
		"zero zk.Client.Get":     func() error { var c zk.Client; _, _, err := c.Get(ctx, "/"); return err },
		"zero zk.Watch.Remove":   func() error { var w zk.Watch; return w.Remove(ctx) },
	} {
		if err := callNoPanic(f); err == nil || err.Error()[:5] == "PANIC" {
			t.Errorf("%s: %v", name, err)
		}
	}
}
