package hold

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/zklock/zklock/internal/errs"
)

// Part is one hold a Multi composes: how to acquire and release it. Key
// identifies the handle behind it: a handle may be in a Multi once.
type Part struct {
	Path    string
	Key     any
	Acquire func(context.Context) (*Hold, error)
	Release func(context.Context, *Hold) error
}

// Multi acquires several holds as one, all or none, in the order of their
// paths, so that two Multis over overlapping paths cannot deadlock.
type Multi struct {
	parts []Part // as given
	order []int  // indexes into parts, in acquisition order
}

// NewMulti checks parts: at least one, no two on one path (the second
// would wait for the first forever), no handle twice.
func NewMulti(parts []Part) (*Multi, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: a MultiLock needs at least one part", errs.ErrInvalidArgument)
	}
	order := make([]int, len(parts))
	for i, p := range parts {
		if p.Acquire == nil {
			return nil, fmt.Errorf("%w: part %d is the zero Part", errs.ErrInvalidArgument, i)
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(parts[a].Path, parts[b].Path) })
	for i := 1; i < len(order); i++ {
		if a, b := parts[order[i-1]], parts[order[i]]; a.Path == b.Path {
			return nil, fmt.Errorf("%w: two parts on %s: the second would wait for the first forever", errs.ErrInvalidArgument, a.Path)
		}
	}
	seen := map[any]bool{}
	for _, p := range parts {
		if seen[p.Key] {
			return nil, fmt.Errorf("%w: one handle in two parts", errs.ErrInvalidArgument)
		}
		seen[p.Key] = true
	}
	return &Multi{parts: parts, order: order}, nil
}

// errPartLost reports that a part held was lost before every part was.
var errPartLost = errors.New("zklock: a multi-lock part was lost")

// releaseTimeout bounds the release of the parts taken by an acquisition
// that failed (its ctx may have ended).
const releaseTimeout = 10 * time.Second

// Acquire takes every part, in path order, and returns their holds in the
// order of the parts as given. Success is returned only with every part
// live: a part lost before the last is held makes it give back what it
// took and start over, until ctx ends. On error nothing is held.
func (m *Multi) Acquire(ctx context.Context) ([]*Hold, error) {
	for {
		holds := make([]*Hold, len(m.parts))
		n, err := m.takeLive(ctx, holds)
		if n == len(m.order) && err == nil {
			return holds, nil
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		rerr, _ := m.release(rctx, holds, m.order[:n]) // a lost part needs no release
		cancel()
		if err != nil && !errors.Is(err, errPartLost) {
			return nil, errors.Join(err, rerr)
		}
		if rerr != nil {
			return nil, rerr
		}
	}
}

// takeLive takes the parts in order, checking after each that every part
// taken so far is still live; it returns how many it took.
func (m *Multi) takeLive(ctx context.Context, holds []*Hold) (int, error) {
	for n, i := range m.order {
		h, err := m.parts[i].Acquire(ctx)
		if err != nil {
			return n, fmt.Errorf("zklock: multi-lock part %s: %w", m.parts[i].Path, err)
		}
		holds[i] = h
		if AnyLost(holds) {
			return n + 1, errPartLost
		}
	}
	return len(m.order), nil
}

// Release gives every part back, in reverse path order. A part lost is
// released as lost; its error (errs.ErrLockLost or errs.ErrLeaseLost) is
// returned when nothing else failed. A part that failed otherwise is
// still held, and Release may be called again for the parts left.
func (m *Multi) Release(ctx context.Context, holds []*Hold) error {
	failed, lost := m.release(ctx, holds, m.order)
	if failed != nil {
		return failed
	}
	return lost
}

// release returns the joined errors of the parts that failed (still held)
// and the first error of a part lost.
func (m *Multi) release(ctx context.Context, holds []*Hold, order []int) (failed, lost error) {
	var fs, ls []error
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		if holds[i] == nil || holds[i].Released() {
			continue // released by an earlier call that failed later on
		}
		switch err := m.parts[i].Release(ctx, holds[i]); {
		case err == nil:
		case errors.Is(err, errs.ErrLockLost) || errors.Is(err, errs.ErrLeaseLost) || errors.Is(err, errs.ErrNotLocked):
			ls = append(ls, err)
		default:
			fs = append(fs, fmt.Errorf("zklock: release multi-lock part %s: %w", m.parts[i].Path, err))
		}
	}
	if len(ls) > 0 {
		lost = ls[0]
	}
	return errors.Join(fs...), lost
}

// AnyLost reports whether the loss signal of any of holds (nil ones
// skipped) has fired.
func AnyLost(holds []*Hold) bool {
	for _, h := range holds {
		if h != nil && h.IsLost() {
			return true
		}
	}
	return false
}

// LostAny returns a channel closed once any of holds' loss signals fires,
// or stop closes; a goroutine waits on them until then.
func LostAny(holds []*Hold, stop <-chan struct{}) <-chan struct{} {
	lost := make(chan struct{})
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(stop)}}
	for _, h := range holds {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.Lost())})
	}
	go func() {
		if i, _, _ := reflect.Select(cases); i > 0 {
			close(lost)
		}
	}()
	return lost
}

// Order returns the indexes of the parts in acquisition (path) order.
func (m *Multi) Order() []int { return m.order }

// Released reports whether every hold of holds (nil ones skipped) was
// given back or counted so.
func Released(holds []*Hold) bool {
	for _, h := range holds {
		if h != nil && !h.Released() {
			return false
		}
	}
	return true
}
