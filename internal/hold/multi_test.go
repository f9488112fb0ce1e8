package hold

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// A Multi's Release releases each part once. Three parts, released in
// reverse path order: "c" counts down (a ReentrantMutex its owner held
// already: nil, its hold still held), "b" is cut off (its hold over, the
// ctx's error), "a" is not begun (ctx ended before its turn). A second
// Release must release "a" alone: releasing "c" again would count its
// owner's own hold down.
func TestMultiReleaseEachPartOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := map[string]int{}
	acquire := func(context.Context) (*Hold, error) { return nil, errors.New("unused") }
	part := func(path string, release func(context.Context, *Hold) error) Part {
		return Part{Path: path, Key: path, Acquire: acquire, Release: func(ctx context.Context, h *Hold) error {
			calls[path]++
			return release(ctx, h)
		}}
	}
	m, err := NewMulti([]Part{
		part("a", func(ctx context.Context, h *Hold) error {
			if err := CheckCtx(ctx); err != nil {
				return err // not begun: still held
			}
			h.finish()
			return nil
		}),
		part("b", func(_ context.Context, h *Hold) error {
			h.finish()
			cancel() // cut off: the ctx ends while the release is under way
			return cutOff(context.Canceled)
		}),
		part("c", func(context.Context, *Hold) error { return nil }), // counted down
	})
	if err != nil {
		t.Fatal(err)
	}
	holds := []*Hold{{}, {}, {}}
	ended := make([]bool, len(holds))
	err = m.Release(ctx, holds, ended)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first Release: %v, want the ctx's error", err)
	}
	if got, want := fmt.Sprint(ended), "[false true true]"; got != want {
		t.Fatalf("ended after the first Release: %s, want %s (a not begun; b cut off; c counted down)", got, want)
	}
	if err := m.Release(t.Context(), holds, ended); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if got, want := fmt.Sprint(calls["a"], calls["b"], calls["c"], ended), "2 1 1 [true true true]"; got != want {
		t.Errorf("release calls of a, b, c and ended after two Releases: %s, want %s", got, want)
	}
}
