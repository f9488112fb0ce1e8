package hold

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
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
	// Stands, if set, reports whether a hold of the part still has its
	// nodes on the server as its session's (Standing.Stands).
	Stands func(context.Context, *Hold) (bool, error)
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
		rerr, _ := m.release(rctx, holds, make([]bool, len(holds)), m.order[:n]) // a lost part needs no release
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
// taken so far is still live; it returns how many it took. Every part but
// the last waited, held, while the later ones were taken: a Break of its
// node in that time fires no loss signal, and a rival may hold it by now,
// so each is looked at on the server (Part.Stands, one request per node)
// before the parts are handed over, as a Slot does for a hold that waited
// after its grant (FuzzSharedHandles found a MultiLock.Lock returning nil
// with its first part's node deleted by a Break while it waited for the
// second).
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
	for _, i := range m.order[:len(m.order)-1] {
		p := m.parts[i]
		if p.Stands == nil {
			continue
		}
		ok, err := p.Stands(ctx, holds[i])
		if err != nil {
			return len(m.order), fmt.Errorf("zklock: multi-lock part %s: %w", p.Path, err)
		}
		if !ok {
			return len(m.order), errPartLost
		}
	}
	if AnyLost(holds) {
		return len(m.order), errPartLost
	}
	return len(m.order), nil
}

// Release gives back, in reverse path order, every part of holds whose
// release has not ended (ended[i] false, ended in the order of holds), and
// marks ended each part whose release returned having begun: given back,
// counted down (a ReentrantMutex re-entered: its owner still holds, but
// the Multi's share of it is over), found lost, or cut off (its ctx ended
// while it was under way: release.go, the hold is over all the same). A
// part's release ends once: released again, a re-entered ReentrantMutex
// would count its owner's own hold down. A part lost is released as lost;
// its error (errs.ErrLockLost or errs.ErrLeaseLost) is returned when
// nothing else failed. A part whose release never began (ctx ended before
// its turn) is still held, and Release may be called again for it.
func (m *Multi) Release(ctx context.Context, holds []*Hold, ended []bool) error {
	failed, lost := m.release(ctx, holds, ended, m.order)
	if failed != nil {
		return failed
	}
	return lost
}

// release releases the parts of order not ended yet, marking ended those
// whose release began; it returns the joined errors of the parts that
// failed otherwise (cut off, or never begun: those still held) and the
// first error of a part lost.
func (m *Multi) release(ctx context.Context, holds []*Hold, ended []bool, order []int) (failed, lost error) {
	var fs, ls []error
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		if holds[i] == nil || ended[i] {
			continue // released by an earlier call that failed later on
		}
		if holds[i].Released() {
			ended[i] = true // given back behind the Multi's back: nothing left to give
			continue
		}
		err := m.parts[i].Release(ctx, holds[i])
		// A release that began is final (release.go): it returns nil, the
		// loss, or with the hold released (cut off). Any other return
		// (ctx ended before it began) left the part as it was.
		lostErr := errors.Is(err, errs.ErrLockLost) || errors.Is(err, errs.ErrLeaseLost) || errors.Is(err, errs.ErrNotLocked)
		ended[i] = err == nil || lostErr || holds[i].Released()
		switch {
		case err == nil:
		case lostErr:
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

// LostAny returns the one loss signal of holds, a Multi's parts: a
// channel closed once any of holds' loss signals fires, or end is called.
// The Multi's owner calls end once any part's release has ended (Release's
// ended): from then the Multi no longer holds every part, whatever the
// part's own signal says (a cut-off hold's Lost closes for new callers
// only; a ReentrantMutex counted down still holds for its owner). A
// goroutine waits on them until the channel closes.
func LostAny(holds []*Hold) (lost <-chan struct{}, end func()) {
	c := make(chan struct{})
	var once sync.Once
	end = func() { once.Do(func() { close(c) }) }
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)}}
	for _, h := range holds {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.Lost())})
	}
	go func() {
		reflect.Select(cases)
		end()
	}()
	return c, end
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
