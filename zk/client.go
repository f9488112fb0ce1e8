package zk

import (
	"context"
	"errors"
	"fmt"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/fanout"
	"github.com/zklock/zklock/internal/session"
	"github.com/zklock/zklock/internal/zkhook"
)

// Client makes ZooKeeper requests outside zklock's recipes, through a
// zklock Session's connection (Session.Client). It is safe for concurrent
// use, may be copied, and is valid for the Session's life; the zero Client
// is not usable (its requests return ErrInvalidArgument).
//
// Every request takes ctx first and returns ctx's error when ctx ends (a
// write may then have been applied or not). A request made while
// disconnected waits for a connection; one in flight when the connection is
// lost fails with ErrConnectionLoss, its outcome unknown. Nothing is
// retried. A request over the session's maximum request size (zklock's
// WithMaxRequestSize) fails with ErrRequestTooLarge, unsent. Failures wrap
// ZooKeeper's errors (test with errors.Is); after the Session is closed,
// requests fail with ErrSessionClosed.
//
// Writes are neither fenced nor tracked: only Multi with a hold's Guard
// makes one conditional on a lock, and nodes created here outlive an
// ownership epoch (ephemeral ones end with the ZooKeeper session). Do not
// write zklock's lock nodes' data: a release is announced that way
// (zklock's WithListingHandoff).
type Client struct {
	conn   *session.Conn
	acl    []client.ACL       // the session's ACL, for creates without their own
	events *fanout.Hub[Event] // the session's transitions, published by the zklock Session
}

func init() {
	zkhook.NewClient = func(conn *session.Conn, acl []client.ACL, events any) any {
		return &Client{conn: conn, acl: acl, events: events.(*fanout.Hub[Event])}
	}
}

func (c *Client) cl() *client.Client { return c.conn.Client() }

// check is checkCtx for a Client's request, which first refuses a Client
// zklock's Session did not make (its zero value, or a nil pointer) with
// ErrInvalidArgument, as os.File's methods on a nil *File return
// os.ErrInvalid, rather than dereference nil further down.
func (c *Client) check(ctx context.Context) error {
	if c.unmade() {
		return errUnmadeClient
	}
	return checkCtx(ctx)
}

// unmade reports that no zklock Session made c.
func (c *Client) unmade() bool { return c == nil || c.conn == nil }

var errUnmadeClient = fmt.Errorf("%w: zero zk.Client: get it from a zklock Session's Client", ErrInvalidArgument)

// checkCtx rejects a nil or finished ctx before anything is sent.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	return ctx.Err()
}

// CreateMode is the kind of node Client.Create and CreateOp make.
type CreateMode int32

// The create modes (ZooKeeper's CreateMode). Sequential modes append a
// ten-digit counter to the name; ephemeral nodes are deleted when their
// session ends; a container is deleted by the server once it has had
// children and has none left. The values are ZooKeeper's.
const (
	ModePersistent           CreateMode = 0
	ModeEphemeral            CreateMode = 1
	ModePersistentSequential CreateMode = 2
	ModeEphemeralSequential  CreateMode = 3
	ModeContainer            CreateMode = 4
)

func (m CreateMode) valid() bool { return m >= ModePersistent && m <= ModeContainer }

// Stat is a node's metadata, as ZooKeeper keeps it. Times are milliseconds
// since the Unix epoch. It is a plain value.
type Stat struct {
	Czxid          int64 // zxid of the node's create: increases with every node created
	Mzxid          int64 // zxid of the last change of the data
	Ctime          int64 // when the node was created
	Mtime          int64 // when the data last changed
	Version        int32 // changes of the data
	Cversion       int32 // changes of the children
	Aversion       int32 // changes of the ACL
	EphemeralOwner int64 // the session that owns an ephemeral node; 0 for others
	DataLength     int32
	NumChildren    int32
	Pzxid          int64 // zxid of the last change of the children
}

func fromClientStat(st client.Stat) Stat { return Stat(st) }

// publicErr reports a closed client as the closed Session it is.
func publicErr(err error) error {
	if errors.Is(err, client.ErrClosed) {
		return fmt.Errorf("%w: %w", errs.ErrSessionClosed, err)
	}
	return err
}

// Create creates a node at path with data, of mode, and returns its name
// (with the counter of a sequential node). acl is the node's ACL; none
// gives it the session's (zklock's WithACL). A mode that
// is none of the Mode constants fails with ErrInvalidArgument.
func (c *Client) Create(ctx context.Context, path string, data []byte, mode CreateMode, acl ...ACL) (string, error) {
	if err := c.check(ctx); err != nil {
		return "", err
	}
	if !mode.valid() {
		return "", fmt.Errorf("%w: create mode %d", ErrInvalidArgument, mode)
	}
	a := c.acl
	if len(acl) > 0 {
		a = toClientACL(acl)
	}
	name, _, err := c.cl().Create(ctx, path, data, client.CreateMode(mode), a)
	return name, publicErr(err)
}

// Get returns the data and Stat of the node at path.
func (c *Client) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	if err := c.check(ctx); err != nil {
		return nil, Stat{}, err
	}
	data, st, err := c.cl().Get(ctx, path)
	return data, fromClientStat(st), publicErr(err)
}

// Set sets the data of the node at path if its version is version (-1:
// any), and returns its new Stat.
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	if err := c.check(ctx); err != nil {
		return Stat{}, err
	}
	st, err := c.cl().Set(ctx, path, data, version)
	return fromClientStat(st), publicErr(err)
}

// Delete deletes the node at path if its version is version (-1: any).
func (c *Client) Delete(ctx context.Context, path string, version int32) error {
	if err := c.check(ctx); err != nil {
		return err
	}
	return publicErr(c.cl().Delete(ctx, path, version))
}

// Exists returns the Stat of the node at path and true, or false (and no
// error) if there is none.
func (c *Client) Exists(ctx context.Context, path string) (Stat, bool, error) {
	if err := c.check(ctx); err != nil {
		return Stat{}, false, err
	}
	st, ok, err := c.cl().Exists(ctx, path)
	return fromClientStat(st), ok, publicErr(err)
}

// Children returns the names of the children of the node at path, in no
// particular order, and the node's Stat.
func (c *Client) Children(ctx context.Context, path string) ([]string, Stat, error) {
	if err := c.check(ctx); err != nil {
		return nil, Stat{}, err
	}
	names, st, err := c.cl().Children(ctx, path)
	return names, fromClientStat(st), publicErr(err)
}

// GetACL returns the ACL and Stat of the node at path.
func (c *Client) GetACL(ctx context.Context, path string) ([]ACL, Stat, error) {
	if err := c.check(ctx); err != nil {
		return nil, Stat{}, err
	}
	acl, st, err := c.cl().GetACL(ctx, path)
	return fromClientACL(acl), fromClientStat(st), publicErr(err)
}

// SetACL sets the ACL of the node at path if its ACL version is version
// (-1: any), and returns its new Stat.
func (c *Client) SetACL(ctx context.Context, path string, acl []ACL, version int32) (Stat, error) {
	if err := c.check(ctx); err != nil {
		return Stat{}, err
	}
	st, err := c.cl().SetACL(ctx, path, toClientACL(acl), version)
	return fromClientStat(st), publicErr(err)
}
