package main

import (
	"context"
	"slices"
	"sync"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// kind is the primitive the flags ask for.
func (f *runFlags) kind() string {
	switch {
	case f.set["n"] && f.queue:
		return kindSemQueue
	case f.set["n"]:
		return kindSemaphore
	case f.shared || f.write:
		return kindRW
	}
	return kindLock
}

// acquirer returns how run acquires path.
func (f *runFlags) acquirer(path string) func(context.Context, *zklock.Session) (grant, error) {
	var opts []zklock.Option
	if f.set["data"] {
		opts = append(opts, zklock.WithData([]byte(f.data)))
	}
	return func(ctx context.Context, s *zklock.Session) (grant, error) {
		if err := checkKind(ctx, s, path, f.kind()); err != nil {
			return grant{}, err
		}
		var revoked <-chan struct{} // nil: not revocable
		if f.revoc {                // checkRunFlags refused it with -n
			var opt zklock.Option
			opt, revoked = revocable()
			opts = append(slices.Clip(opts), opt)
		}
		switch f.kind() {
		case kindSemaphore:
			return acquireLease(ctx, s, path, f.n, f.try, opts)
		case kindSemQueue:
			return acquireLease(ctx, s, path, f.n, f.try, append(opts, zklock.WithPermitLayout()))
		case kindRW:
			return acquireRW(ctx, s, path, f.shared, f.try, opts, revoked)
		}
		return acquireMutex(ctx, s, path, f.try, opts, revoked)
	}
}

// revocable is WithRevocable with a listener that closes revoked at the
// first request (the job's grace starts then; later requests change
// nothing), without blocking the session's goroutine.
func revocable() (zklock.Option, <-chan struct{}) {
	revoked := make(chan struct{})
	var once sync.Once
	return zklock.WithRevocable(func() { once.Do(func() { close(revoked) }) }), revoked
}

func acquireMutex(ctx context.Context, s *zklock.Session, path string, try bool, opts []zklock.Option, revoked <-chan struct{}) (grant, error) {
	m, err := zklock.NewMutex(s, path, opts...)
	if err != nil {
		return grant{}, err
	}
	if try {
		err = m.TryLock(ctx)
	} else {
		err = m.Lock(ctx)
	}
	if err != nil {
		return grant{}, err
	}
	return grant{lost: m.Lost(), revoked: revoked, token: m.Token(), node: guardPath(m.Guard()), release: m.Unlock}, nil
}

func acquireRW(ctx context.Context, s *zklock.Session, path string, shared, try bool, opts []zklock.Option, revoked <-chan struct{}) (grant, error) {
	m, err := zklock.NewRWMutex(s, path, opts...)
	if err != nil {
		return grant{}, err
	}
	lock, unlock := m.Lock, m.Unlock
	switch {
	case shared && try:
		lock, unlock = m.TryRLock, m.RUnlock
	case shared:
		lock, unlock = m.RLock, m.RUnlock
	case try:
		lock = m.TryLock
	}
	if err := lock(ctx); err != nil {
		return grant{}, err
	}
	return grant{lost: m.Lost(), revoked: revoked, token: m.Token(), node: guardPath(m.Guard()), release: unlock}, nil
}

func acquireLease(ctx context.Context, s *zklock.Session, path string, limit int, try bool, opts []zklock.Option) (grant, error) {
	sem, err := zklock.NewSemaphore(s, path, limit, opts...)
	if err != nil {
		return grant{}, err
	}
	acquire := sem.Acquire
	if try {
		acquire = sem.TryAcquire
	}
	l, err := acquire(ctx, 1)
	if err != nil {
		return grant{}, err
	}
	return grant{lost: l.Lost(), token: l.Token(), node: leasePath(l), release: l.Release}, nil
}

// guardPath is the node a guard checks, the hold's; "" for a nil guard
// (the hold ended already).
// leasePath is the node behind a lease's Token: the last of its guard's.
func leasePath(l *zklock.Lease) string {
	g := l.Guard()
	if len(g) == 0 {
		return ""
	}
	return guardPath(g[len(g)-1].(*zk.CheckOp))
}

func guardPath(g *zk.CheckOp) string {
	if g == nil {
		return ""
	}
	return g.Path
}
