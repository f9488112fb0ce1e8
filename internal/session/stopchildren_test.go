package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
)

// StopChildren on a real server: a ChildrenW's watch given up by one of
// two waiters stays for the other (it still hears the change); given up
// by the last, it is removed from the server, whose watch count falls
// back to what it was. Without StopChildren the watch of a directory
// that never changes again stays until the session ends (FuzzSharedHandles:
// a semaphore's lease waiter whose session expired left one on
// /sl/leases).
func TestStopChildrenRemovesServerWatch(t *testing.T) {
	zk, c, other, ctx := trackPair(t, time.Minute, 60*time.Second)
	dir := "/stopchildren"
	_, _, err := other.Client().Create(ctx, dir, nil, client.ModePersistent, client.WorldACL(client.PermAll))
	require.NoError(t, err)
	count := func() int64 {
		n, err := zk.WatchCount(ctx)
		require.NoError(t, err)
		return n
	}
	base := count()

	_, _, ch1, err := c.ChildrenW(ctx, dir)
	require.NoError(t, err)
	_, _, ch2, err := c.ChildrenW(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, base+1, count(), "one child watch per path and session")

	c.StopChildren(dir, ch1)
	_, _, _, err = other.CreateSeq(ctx, dir+"/_c_x-n-", nil)
	require.NoError(t, err)
	select {
	case ev := <-ch2:
		require.Equal(t, client.EventNodeChildrenChanged, ev.Type, "the other waiter's watch stayed: %+v", ev)
	case <-ctx.Done():
		t.Fatal("the waiter left on the path heard nothing after the other gave up")
	}
	select {
	case ev := <-ch1:
		t.Fatalf("the stopped waiter heard %+v", ev)
	default:
	}

	_, _, ch3, err := c.ChildrenW(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, base+1, count())
	c.StopChildren(dir, ch3)
	deadline := time.Now().Add(10 * time.Second)
	for count() != base {
		if time.Now().After(deadline) {
			t.Fatalf("the server still holds %d watches 10s after the last waiter gave up (%d before ChildrenW)", count(), base)
		}
		time.Sleep(20 * time.Millisecond) // polling the server's count: no event says a watch went
	}
	c.StopChildren(dir, ch3) // a second call does nothing
	require.Equal(t, base, count())
}
