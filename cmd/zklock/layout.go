package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// The primitives a path can hold. Their nodes differ, so a Mutex and the
// write lock of an RWMutex on one path would not exclude each other: run
// refuses a path that another kind of holder uses.
const (
	kindLock      = "lock"            // Mutex (and Election): "lock-" nodes
	kindRW        = "rw"              // RWMutex: "__READ__" and "__WRIT__" nodes
	kindSemaphore = "semaphore"       // Semaphore: "locks" and "leases" children
	kindSemQueue  = "semaphore-queue" // Semaphore WithPermitLayout: "permit-" nodes
)

// checkPath rejects a path the library would refuse, before anything is
// sent.
func checkPath(s *zklock.Session, path string) error {
	_, err := zklock.NewMutex(s, path)
	return err
}

// detectKind tells which kind of primitive uses path from its children, or
// returns "" when no holder or waiter is there.
func detectKind(ctx context.Context, s *zklock.Session, path string) (string, error) {
	names, _, err := s.Client().Children(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("list %s: %w", path, err)
	}
	kind := ""
	for _, n := range names {
		switch {
		case n == "locks" || n == "leases":
			return kindSemaphore, nil
		case strings.Contains(n, queue.KindPermit):
			return kindSemQueue, nil
		case strings.Contains(n, "__READ__") || strings.Contains(n, "__WRIT__"):
			return kindRW, nil
		case strings.Contains(n, "lock-") || strings.Contains(n, "__lock__"):
			kind = kindLock
		}
	}
	return kind, nil
}

// layoutError says that path is in use by another kind of primitive.
type layoutError struct{ path, found, want string }

func (e *layoutError) Error() string {
	return fmt.Sprintf("%s is in use as a %s, not a %s", e.path, kindName(e.found), kindName(e.want))
}

func (e *layoutError) hint() string {
	switch e.found {
	case kindSemaphore:
		return "pass -n with its limit, without --queue"
	case kindSemQueue:
		return "pass -n with its limit and --queue"
	case kindRW:
		return "pass --shared or --write"
	}
	return "drop -n, --shared and --write"
}

func kindName(kind string) string {
	switch kind {
	case kindRW:
		return "reader/writer lock"
	case kindSemaphore:
		return "semaphore"
	case kindSemQueue:
		return "semaphore in the queue layout"
	}
	return "lock"
}

// checkKind fails with a *layoutError when path is in use by another kind
// of primitive than want. (Racy by nature: it catches a mistake, it does not
// arbitrate between clients that start at the same instant.)
func checkKind(ctx context.Context, s *zklock.Session, path, want string) error {
	if err := checkPath(s, path); err != nil {
		return err
	}
	found, err := detectKind(ctx, s, path)
	if err != nil || found == "" || found == want {
		return err
	}
	return &layoutError{path: path, found: found, want: want}
}
