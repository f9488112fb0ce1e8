package zklock

import (
	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
)

// closedCh is returned as the loss signal of nothing held.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// acquisition is the granted state every lock handle exposes.
type acquisition struct{ h *queue.Held }

func (a acquisition) lost() <-chan struct{} {
	if a.h == nil {
		return closedCh
	}
	return a.h.Epoch.Done
}

func (a acquisition) token() int64 {
	if a.h == nil {
		return 0
	}
	return a.h.Token
}

func (a acquisition) path() string {
	if a.h == nil {
		return ""
	}
	return a.h.Path
}

// guard is a multi-op that succeeds only while our node exists (version -1
// matches any data version). Our node's name is unique, so it existing means
// we still hold.
func (a acquisition) guard() *zk.CheckVersionRequest {
	if a.h == nil {
		return nil
	}
	return &zk.CheckVersionRequest{Path: a.h.Path, Version: -1}
}
