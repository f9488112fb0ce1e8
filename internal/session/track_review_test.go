package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Adversarial review of issue 38 item 3: the idle removal of a tree racing
// new trackings. With a linger of a millisecond the tree is removed between
// most trackings, and a TrackDir often comes while the removal
// (removeWatches) is on its way. Each tracking that is not lost at once
// must hear of a deletion made after it began; a tracking set while the
// server's watch is being removed would hear nothing.
func TestReviewTrackDirRacesIdleRemoval(t *testing.T) {
	_, c, other, ctx := trackPair(t, 500*time.Microsecond, 60*time.Second)
	dir := "/advtrack"
	require.NoError(t, other.CreateContainer(ctx, dir))
	keep, _, _, err := other.CreateSeq(ctx, dir+"/_c_keep-n-", nil) // keeps the container
	require.NoError(t, err)
	defer func() { _ = other.Delete(context.Background(), keep) }()
	lost, heard, trees := 0, 0, 0
	var last *tree
	for i := range 300 {
		// The create is the gap between the last Stop and this TrackDir,
		// about the linger: the removal fires before, during or after it.
		name, _, _, err := other.CreateSeq(ctx, dir+"/_c_x-n-", nil)
		require.NoError(t, err)
		next, stop, _, err := c.TrackDir(ctx, dir)
		require.NoError(t, err)
		c.mu.Lock()
		if tr := c.trees[dir]; tr != last {
			trees, last = trees+1, tr
		}
		c.mu.Unlock()
		require.NoError(t, other.Delete(ctx, name))
		nctx, ncancel := context.WithTimeout(ctx, 5*time.Second)
		gone, look, err := next(nctx)
		ncancel()
		stop()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("round %d: the tracking heard of no deletion within 5s (%d lost at once, %d heard before)", i, lost, heard)
		case err != nil:
			t.Fatal(err)
		case look:
			lost++
		default:
			require.Equal(t, []string{name[len(dir)+1:]}, gone, "round %d", i)
			heard++
		}
	}
	t.Logf("300 trackings: %d heard the deletion, %d were lost at once (look); %d trees set", heard, lost, trees)
	require.Positive(t, heard)
	require.Greater(t, trees, 1, "the tree was removed between trackings")
}

// The survey tells tracking apart by the servers' versions: only 3.9 and
// later keep a session's watches of different modes on one path apart
// (ZOOKEEPER-4466); an unreadable version counts as too old.
func TestVersionKeepsWatchModes(t *testing.T) {
	for out, want := range map[string]bool{
		"Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\nMode: standalone\n": false,
		"Zookeeper version: 3.9.4-abc, built on 2025-01-01 00:00 UTC\n":                                                        true,
		"Zookeeper version: 3.10.0, built on x\n":                                                                              true,
		"Zookeeper version: 4.0.0-SNAPSHOT, built on x\n":                                                                      true,
		"Zookeeper version: 3.6.3--1, built on x\n":                                                                            false,
		"This ZooKeeper instance is not currently serving requests\n":                                                          false,
	} {
		require.Equal(t, want, versionAtLeast(parseVersion(out), 3, 9), "%q", out)
	}
}
