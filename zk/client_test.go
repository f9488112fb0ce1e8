package zk_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// newSession opens a session on c, closed at cleanup.
func newSession(t *testing.T, c *zktest.Cluster, opts ...zklock.SessionOption) *zklock.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, append([]zklock.SessionOption{zklock.WithServers(c.Servers()...)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestClient runs the Client's contract against one real ZooKeeper.
func TestClient(t *testing.T) {
	c := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Run("errors are ZooKeeper's codes", func(t *testing.T) { testErrorCodes(ctx, t, c) })
	t.Run("bad calls send nothing", func(t *testing.T) { testBadCalls(ctx, t, c) })
	t.Run("multi names the failing op", func(t *testing.T) { testMultiFails(ctx, t, c) })
	t.Run("multi under a guard", func(t *testing.T) { testMultiGuard(ctx, t, c) })
	t.Run("session ACL by default", func(t *testing.T) { testSessionACL(ctx, t, c) })
	t.Run("closed session", func(t *testing.T) { testClosed(ctx, t, c) })
	t.Run("recipes wrap the codes", func(t *testing.T) { testRecipeErrors(ctx, t, c) })
	t.Run("request over the limit", func(t *testing.T) { testRequestTooLarge(ctx, t, c) })
}

func testErrorCodes(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	cl := newSession(t, c).Client()
	_, err := cl.Create(ctx, "/codes", nil, zk.ModePersistent)
	require.NoError(t, err)
	_, err = cl.Create(ctx, "/codes/eph", nil, zk.ModeEphemeral)
	require.NoError(t, err)
	_, _, err = cl.Get(ctx, "/codes/none")
	require.ErrorIs(t, err, zk.ErrNoNode)
	_, err = cl.Create(ctx, "/codes", nil, zk.ModePersistent)
	require.ErrorIs(t, err, zk.ErrNodeExists)
	_, err = cl.Set(ctx, "/codes", nil, 7)
	require.ErrorIs(t, err, zk.ErrBadVersion)
	require.ErrorIs(t, cl.Delete(ctx, "/codes", -1), zk.ErrNotEmpty)
	_, err = cl.Create(ctx, "/codes/eph/child", nil, zk.ModePersistent)
	require.ErrorIs(t, err, zk.ErrNoChildrenForEphemerals)
	_, err = cl.Create(ctx, "/codes/acl", nil, zk.ModePersistent, zk.ACL{Perms: zk.PermAll, Scheme: "nosuchscheme", ID: "x"})
	require.ErrorIs(t, err, zk.ErrInvalidACL)
	_, err = cl.Create(ctx, "/codes/ro", nil, zk.ModePersistent, zk.WorldACL(zk.PermRead)...)
	require.NoError(t, err)
	_, err = cl.Set(ctx, "/codes/ro", []byte("x"), -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
}

func testBadCalls(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	s := newSession(t, c)
	cl := s.Client()
	_, err := cl.Create(ctx, "/bad", nil, zk.CreateMode(42))
	require.ErrorIs(t, err, zk.ErrInvalidArgument)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument, "one sentinel, both names")
	var nilCtx context.Context
	_, _, err = cl.Get(nilCtx, "/bad")
	require.ErrorIs(t, err, zk.ErrNilContext)
	_, _, err = cl.Get(ctx, "relative")
	require.ErrorIs(t, err, zk.ErrBadArguments)

	// A nil op (the Guard of nothing held) fails the Multi before anything
	// is sent: the create beside it is not applied.
	m, err := zklock.NewMutex(s, "/bad/lock")
	require.NoError(t, err)
	res, err := cl.Multi(ctx, &zk.CreateOp{Path: "/bad-created", Mode: zk.ModePersistent}, m.Guard())
	require.ErrorIs(t, err, zk.ErrInvalidArgument)
	require.Contains(t, err.Error(), "op 1")
	require.Nil(t, res)
	res, err = cl.Multi(ctx, &zk.CreateOp{Path: "/bad-created", Mode: zk.ModePersistent}, &zk.CreateOp{Path: "/bad-other", Mode: -1})
	require.ErrorIs(t, err, zk.ErrInvalidArgument)
	require.Nil(t, res)
	_, ok, err := cl.Exists(ctx, "/bad-created")
	require.NoError(t, err)
	require.False(t, ok, "a refused Multi applied its create")
}

func testMultiFails(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	cl := newSession(t, c).Client()
	res, err := cl.Multi(ctx,
		&zk.CreateOp{Path: "/fails-a", Mode: zk.ModePersistent},
		&zk.CheckOp{Path: "/fails-missing", Version: -1},
		&zk.SetDataOp{Path: "/fails-a", Data: []byte("x"), Version: -1})
	require.ErrorIs(t, err, zk.ErrNoNode)
	require.Contains(t, err.Error(), "/fails-missing", "the failing op is named")
	require.Len(t, res, 3)
	require.ErrorIs(t, res[0].Err, zk.ErrRolledBack)
	require.ErrorIs(t, res[1].Err, zk.ErrNoNode)
	require.ErrorIs(t, res[2].Err, zk.ErrRolledBack)
	_, ok, err := cl.Exists(ctx, "/fails-a")
	require.NoError(t, err)
	require.False(t, ok, "a failed Multi applied its create")
}

func testMultiGuard(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	s := newSession(t, c)
	cl := s.Client()
	_, err := cl.Create(ctx, "/guarded", nil, zk.ModePersistent)
	require.NoError(t, err)
	m, err := zklock.NewMutex(s, "/guard/lock")
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	guard := m.Guard()
	res, err := cl.Multi(ctx, guard, &zk.SetDataOp{Path: "/guarded", Data: []byte("1"), Version: -1})
	require.NoError(t, err)
	require.Equal(t, int32(1), res[1].Stat.Version)
	require.NoError(t, m.Unlock(ctx))
	_, err = cl.Multi(ctx, guard, &zk.SetDataOp{Path: "/guarded", Data: []byte("2"), Version: -1})
	require.ErrorIs(t, err, zk.ErrNoNode, "the guard of a released hold")
	data, _, err := cl.Get(ctx, "/guarded")
	require.NoError(t, err)
	require.Equal(t, "1", string(data))
}

// The Session's ACL (WithACL) reaches creates without an ACL of their own,
// through Create and through a CreateOp.
func testSessionACL(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	acl := zk.WorldACL(zk.PermRead | zk.PermWrite | zk.PermCreate | zk.PermDelete)
	cl := newSession(t, c, zklock.WithACL(acl...)).Client()
	_, err := cl.Create(ctx, "/acl-create", nil, zk.ModePersistent)
	require.NoError(t, err)
	_, err = cl.Multi(ctx, &zk.CreateOp{Path: "/acl-multi", Mode: zk.ModePersistent})
	require.NoError(t, err)
	_, err = cl.Create(ctx, "/acl-own", nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
	require.NoError(t, err)
	for p, want := range map[string][]zk.ACL{"/acl-create": acl, "/acl-multi": acl, "/acl-own": zk.WorldACL(zk.PermAll)} {
		got, _, err := cl.GetACL(ctx, p)
		require.NoError(t, err)
		require.Equal(t, want, got, p)
	}
}

func testClosed(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	s := newSession(t, c)
	cl := s.Client()
	require.NoError(t, s.Close())
	_, _, err := cl.Get(ctx, "/")
	require.ErrorIs(t, err, zk.ErrSessionClosed)
	require.ErrorIs(t, err, zklock.ErrSessionClosed)
	_, err = cl.Multi(ctx, &zk.CheckOp{Path: "/", Version: -1})
	require.ErrorIs(t, err, zk.ErrSessionClosed)
	require.Equal(t, zk.StateClosed, s.State())
}

// TestNoTypeAliases: the package's API is its own types, so go doc shows
// their fields and methods (an alias of an internal type hides them).
func TestNoTypeAliases(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, 0)
	require.NoError(t, err)
	n := 0
	for name, p := range pkgs {
		if strings.HasSuffix(name, "_test") {
			continue
		}
		for file, f := range p.Files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
					for _, sp := range g.Specs {
						n++
						if ts := sp.(*ast.TypeSpec); ts.Assign.IsValid() {
							t.Errorf("%s: type %s is an alias", file, ts.Name.Name)
						}
					}
				}
			}
		}
	}
	require.NotZero(t, n, "no type declarations found")
}

// Recipes' errors wrap ZooKeeper's codes so that errors.Is finds them as zk
// names: a Mutex on a path whose parent the session may not create under.
func testRecipeErrors(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	s := newSession(t, c)
	_, err := s.Client().Create(ctx, "/closed", nil, zk.ModePersistent, zk.WorldACL(zk.PermRead)...)
	require.NoError(t, err)
	m, err := zklock.NewMutex(s, "/closed/lock")
	require.NoError(t, err)
	err = m.Lock(ctx)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	if errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("ErrNoAuth also reported as ErrNoNode: %v", err)
	}
}

// A write over the servers' jute.maxbuffer (zklock.DefaultMaxRequestSize)
// would make the server drop the session's connection, failing every
// request in flight on it, the recipes' too: it is refused before it is
// sent, and the connection stays. A request of exactly the limit is
// served, so the bound is not stricter than the server's.
// maxRequest is the default jute.maxbuffer, WithMaxRequestSize's default.
const maxRequest = 1<<20 - 1

func testRequestTooLarge(ctx context.Context, t *testing.T, c *zktest.Cluster) {
	cl := newSession(t, c).Client()
	const path = "/big"
	// A create's request: xid, opcode, path, data, the ACL
	// (world:anyone), flags; each string and buffer after its length.
	acl := zk.WorldACL(zk.PermAll)[0]
	fixed := 4 + 4 + (4 + len(path)) + 4 + 4 + (4 + 4 + len(acl.Scheme) + 4 + len(acl.ID)) + 4
	largest := maxRequest - fixed
	_, err := cl.Create(ctx, path, make([]byte, largest+1), zk.ModePersistent)
	require.ErrorIs(t, err, zk.ErrRequestTooLarge)
	_, err = cl.Multi(ctx, &zk.CreateOp{Path: path, Data: make([]byte, largest), Mode: zk.ModePersistent})
	require.ErrorIs(t, err, zk.ErrRequestTooLarge, "a multi adds its op headers to the create's size")
	_, err = cl.Create(ctx, path, make([]byte, largest), zk.ModePersistent)
	require.NoError(t, err, "a request of exactly the limit")
	// set: xid, opcode, path, data, version.
	_, err = cl.Set(ctx, path, make([]byte, maxRequest-(4+4+(4+len(path))+4+4)+1), -1)
	require.ErrorIs(t, err, zk.ErrRequestTooLarge)
	// ErrRequestTooLarge comes before the request is queued, so nothing
	// reached the server (on the old code the server dropped the
	// connection: ErrConnectionLoss), and the session serves on.
	_, _, err = cl.Get(ctx, path)
	require.NoError(t, err)
}
