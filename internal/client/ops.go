package client

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Every request below takes ctx first. When ctx ends before the reply,
// the request returns ctx.Err() at once and its reply is dropped when it
// arrives; a write may or may not have been applied. A request made while
// the client is disconnected waits for a connection (or ctx); a request in
// flight when the connection is lost fails with ErrConnectionLoss, its
// outcome unknown. Other failures are *Error values wrapping the server's
// error (errors.Is(err, ErrNoNode), ...).

// checkPath refuses what cannot be a node's path before it is sent; the
// server validates the rest.
func checkPath(op, path string) error {
	if !strings.HasPrefix(path, "/") || strings.IndexByte(path, 0) >= 0 {
		return &Error{Op: op, Path: path, Err: fmt.Errorf("%w: not an absolute path", ErrBadArguments)}
	}
	return nil
}

// call checks path, sends r and waits; on success the caller reads r's
// outcome and releases it.
func (c *Client) call(ctx context.Context, r *request) error {
	if err := checkPath(opName(r.op), r.path); err != nil {
		release(r)
		return err
	}
	return c.do(ctx, r)
}

// Create creates a node at path with data, of mode (ModeContainer and the
// sequential modes included; TTL modes need CreateTTL), with acl (which
// must not be empty: WorldACL(PermAll) for an open node). It returns the
// node's name (with the sequence number of a sequential node) and its
// Stat: Czxid and EphemeralOwner come back in the same round trip
// (create2).
func (c *Client) Create(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL) (string, Stat, error) {
	if mode.ttl() {
		return "", Stat{}, &Error{Op: "create", Path: path, Err: fmt.Errorf("%w: a TTL mode needs CreateTTL", ErrBadArguments)}
	}
	return c.create(ctx, path, data, mode, acl, 0)
}

// CreateTTL creates a persistent node that the server deletes once it has
// had no children and no change for ttl. mode is ModePersistentTTL or
// ModePersistentSequentialTTL. Servers refuse it with ErrUnimplemented
// unless started with zookeeper.extendedTypesEnabled=true.
func (c *Client) CreateTTL(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) (string, Stat, error) {
	if !mode.ttl() || ttl < time.Millisecond {
		return "", Stat{}, &Error{Op: "create", Path: path, Err: fmt.Errorf("%w: TTL mode %d with TTL %v", ErrBadArguments, mode, ttl)}
	}
	return c.create(ctx, path, data, mode, acl, ttl.Milliseconds())
}

func (c *Client) create(ctx context.Context, path string, data []byte, mode CreateMode, acl []ACL, ttl int64) (string, Stat, error) {
	r := newRequest(mode.opcode(), path)
	r.data, r.flags, r.acl, r.ttl = data, int32(mode), acl, ttl
	if err := c.call(ctx, r); err != nil {
		return "", Stat{}, err
	}
	name, st, err := r.rpath, r.stat, r.failure()
	release(r)
	return name, st, err
}

// Delete deletes the node at path if its version is version (-1: any).
func (c *Client) Delete(ctx context.Context, path string, version int32) error {
	r := newRequest(opDelete, path)
	r.version = version
	if err := c.call(ctx, r); err != nil {
		return err
	}
	err := r.failure()
	release(r)
	return err
}

// Exists returns the Stat of the node at path and true, or false (and no
// error) if there is none.
func (c *Client) Exists(ctx context.Context, path string) (Stat, bool, error) {
	st, ok, _, err := c.exists(ctx, path, false)
	return st, ok, err
}

// ExistsW is Exists that also sets a watch: WatchData if the node exists
// (it fires when the node changes or is deleted), WatchExist if not (it
// fires when the node is created). The watch is nil on error.
func (c *Client) ExistsW(ctx context.Context, path string) (Stat, bool, *Watch, error) {
	return c.exists(ctx, path, true)
}

func (c *Client) exists(ctx context.Context, path string, watch bool) (Stat, bool, *Watch, error) {
	r := newRequest(opExists, path)
	if watch {
		r.watch = newWatch(c, path, WatchData)
	}
	if err := c.call(ctx, r); err != nil {
		return Stat{}, false, nil, err
	}
	st, w, missing := r.stat, r.watch, r.err == ErrNoNode
	if !r.watchSet {
		w = nil
	}
	var err error
	if !missing {
		err = r.failure()
	}
	release(r)
	switch {
	case missing:
		return Stat{}, false, w, nil
	case err != nil:
		return Stat{}, false, nil, err
	}
	return st, true, w, nil
}

// Get returns the data and Stat of the node at path.
func (c *Client) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	data, st, _, err := c.get(ctx, path, false)
	return data, st, err
}

// GetW is Get that also sets a WatchData watch: it fires when the node's
// data changes or the node is deleted. The watch is nil on error.
func (c *Client) GetW(ctx context.Context, path string) ([]byte, Stat, *Watch, error) {
	return c.get(ctx, path, true)
}

func (c *Client) get(ctx context.Context, path string, watch bool) ([]byte, Stat, *Watch, error) {
	r := newRequest(opGetData, path)
	if watch {
		r.watch = newWatch(c, path, WatchData)
	}
	if err := c.call(ctx, r); err != nil {
		return nil, Stat{}, nil, err
	}
	data, st, w, err := r.rdata, r.stat, r.watch, r.failure()
	release(r)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	return data, st, w, nil
}

// Set sets the data of the node at path if its version is version (-1:
// any), and returns its new Stat.
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	r := newRequest(opSetData, path)
	r.data, r.version = data, version
	if err := c.call(ctx, r); err != nil {
		return Stat{}, err
	}
	st, err := r.stat, r.failure()
	release(r)
	return st, err
}

// Children returns the names of the children of the node at path, in no
// particular order, and the node's Stat.
func (c *Client) Children(ctx context.Context, path string) ([]string, Stat, error) {
	names, st, _, err := c.children(ctx, path, false)
	return names, st, err
}

// ChildrenW is Children that also sets a WatchChildren watch: it fires
// when a child is created or deleted, or the node is deleted. The watch is
// nil on error.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, Stat, *Watch, error) {
	return c.children(ctx, path, true)
}

func (c *Client) children(ctx context.Context, path string, watch bool) ([]string, Stat, *Watch, error) {
	r := newRequest(opGetChildren2, path)
	if watch {
		r.watch = newWatch(c, path, WatchChildren)
	}
	if err := c.call(ctx, r); err != nil {
		return nil, Stat{}, nil, err
	}
	names, st, w, err := r.children, r.stat, r.watch, r.failure()
	release(r)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	return names, st, w, nil
}

// Sync makes the server the client is connected to catch up with the
// leader on path, so that a read after it sees every write committed
// before it.
func (c *Client) Sync(ctx context.Context, path string) error {
	r := newRequest(opSync, path)
	if err := c.call(ctx, r); err != nil {
		return err
	}
	err := r.failure()
	release(r)
	return err
}
