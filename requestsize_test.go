package zklock_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// newPrimitive builds one kind of primitive on path, as the request-size
// tests need it.
var newPrimitive = map[string]func(s *zklock.Session, path string, opts ...zklock.Option) error{
	"Mutex": func(s *zklock.Session, path string, opts ...zklock.Option) error {
		_, err := zklock.NewMutex(s, path, opts...)
		return err
	},
	"ReentrantMutex": func(s *zklock.Session, path string, opts ...zklock.Option) error {
		_, err := zklock.NewReentrantMutex(s, path, opts...)
		return err
	},
	"RWMutex": func(s *zklock.Session, path string, opts ...zklock.Option) error {
		_, err := zklock.NewRWMutex(s, path, opts...)
		return err
	},
	"Semaphore": func(s *zklock.Session, path string, opts ...zklock.Option) error {
		_, err := zklock.NewSemaphore(s, path, 2, opts...)
		return err
	},
	"Election": func(s *zklock.Session, path string, opts ...zklock.Option) error {
		_, err := zklock.NewElection(s, path, opts...)
		return err
	},
}

// TestRequestOverMaxBufferRefused: a create request over the server's
// jute.maxbuffer makes the server drop the session's connection, every
// time it is retried. A path and data that would make one are refused by
// the constructor, before anything is sent; the limit applies to the whole
// request, path included, and WithMaxRequestSize follows a server with a
// larger jute.maxbuffer.
func TestRequestOverMaxBufferRefused(t *testing.T) {
	t.Parallel()
	c := shared(t)
	s := newSession(t, c.Servers())
	big := zklock.WithData(make([]byte, zk.MaxDataSize))
	long := "/zklock-test/" + strings.Repeat("p", 5000)
	huge := "/zklock-test/" + strings.Repeat("p", 1100_000)
	larger := newSession(t, c.Servers(), zklock.WithMaxRequestSize(1536<<10-4))
	for name, build := range newPrimitive {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, build(s, long, big), zklock.ErrInvalidArgument, "5000-byte path with MaxDataSize data")
			require.ErrorIs(t, build(s, huge), zklock.ErrInvalidArgument, "1.1 MB path")
			require.NoError(t, build(s, long), "5000-byte path, default data")
			require.NoError(t, build(larger, long, big), "a larger max request size admits it")
		})
	}
	t.Run("Campaign", func(t *testing.T) {
		e, err := zklock.NewElection(s, long)
		require.NoError(t, err)
		_, err = e.Campaign(ctxFor(t), make([]byte, zk.MaxDataSize))
		require.ErrorIs(t, err, zklock.ErrInvalidArgument)
		cands, err := zklock.ContendersOf(ctxFor(t), e)
		require.NoError(t, err)
		require.Empty(t, cands, "nothing was sent")
	})
}

// TestLargestRequestIsServed: data sized to the last byte the constructor
// admits under a long path is served (a request over the server's limit
// would make it drop the connection on every try, so Lock could not
// succeed), so the size zklock computes is not more lenient than the
// server's check; one byte more is refused.
func TestLargestRequestIsServed(t *testing.T) {
	t.Parallel()
	c := shared(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, strings.Repeat("p", 6000))
	admits := func(n int) bool {
		_, err := zklock.NewMutex(s, path, zklock.WithData(make([]byte, n)))
		return err == nil
	}
	n := sort.Search(zk.MaxDataSize+1, func(n int) bool { return !admits(n) }) - 1
	require.Less(t, n, zk.MaxDataSize, "the path counts against the limit")
	_, err := zklock.NewMutex(s, path, zklock.WithData(make([]byte, n+1)))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	m, err := zklock.NewMutex(s, path, zklock.WithData(make([]byte, n)))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(ctxFor(t), testTimeout/2)
	defer cancel()
	require.NoError(t, m.Lock(ctx))
	cs, err := zklock.ContendersOf(ctx, m)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	require.Len(t, cs[0].Data, n)
	require.NoError(t, m.Unlock(ctx))
}
