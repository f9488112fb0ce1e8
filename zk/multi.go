package zk

import (
	"context"
	"fmt"

	"github.com/zklock/zklock/internal/client"
)

// Op is one operation of Client.Multi: a *CreateOp, *SetDataOp, *DeleteOp
// or *CheckOp. The Guard of every zklock primitive returns a *CheckOp. The
// interface is closed: no other type implements it.
type Op interface {
	clientOp(sessionACL []client.ACL) (client.Op, error)
}

// CreateOp creates a node at Path with Data, of Mode. ACL nil gives the node
// the session's ACL (zklock's WithACL).
type CreateOp struct {
	Path string
	Data []byte
	Mode CreateMode
	ACL  []ACL
}

// SetDataOp sets the data of the node at Path if its version is Version
// (-1: any).
type SetDataOp struct {
	Path    string
	Data    []byte
	Version int32
}

// DeleteOp deletes the node at Path if its version is Version (-1: any).
type DeleteOp struct {
	Path    string
	Version int32
}

// CheckOp fails the whole Multi unless the node at Path exists with data
// version Version (-1: any version). A hold's Guard is one: the writes
// after it commit only while the hold's node stands.
type CheckOp struct {
	Path    string
	Version int32
}

func (o *CreateOp) clientOp(sessionACL []client.ACL) (client.Op, error) {
	if !o.Mode.valid() {
		return client.Op{}, fmt.Errorf("%w: create mode %d", ErrInvalidArgument, o.Mode)
	}
	acl := sessionACL
	if o.ACL != nil {
		acl = toClientACL(o.ACL)
	}
	return client.CreateOp(o.Path, o.Data, client.CreateMode(o.Mode), acl), nil
}

func (o *SetDataOp) clientOp([]client.ACL) (client.Op, error) {
	return client.SetOp(o.Path, o.Data, o.Version), nil
}

func (o *DeleteOp) clientOp([]client.ACL) (client.Op, error) {
	return client.DeleteOp(o.Path, o.Version), nil
}

func (o *CheckOp) clientOp([]client.ACL) (client.Op, error) {
	return client.CheckOp(o.Path, o.Version), nil
}

// OpResult is the outcome of one Op of a Multi.
type OpResult struct {
	// Path is the created node's name (with a sequential node's counter),
	// for a CreateOp.
	Path string
	// Stat is the node's Stat after a SetDataOp, and after a CreateOp when
	// the server returns it (ZooKeeper 3.7.2, 3.8.2, 3.9.0 and later, and
	// for containers); zero otherwise.
	Stat Stat
	// Err is nil for an applied op. In a failed Multi the op that failed
	// has its error and every other one ErrRolledBack.
	Err error
}

// Multi applies ops in one ZooKeeper transaction: all of them or none. It
// returns one result per op, in order, and, when the transaction failed,
// the error of the op that failed, naming its path (errors.Is finds
// ErrNoNode for a Guard whose node is gone, ErrBadVersion for a cohort's
// guard after a local handoff, ...). Put a hold's Guard first to write only
// while holding:
//
//	s.Client().Multi(ctx, m.Guard(), &zk.SetDataOp{Path: p, Data: d, Version: -1})
//
// Multi is not retried on connection loss: its outcome is then unknown
// (ErrConnectionLoss). A nil op (the Guard of nothing held, or of a
// sequence-layout Mutex, which has none) or a CreateOp of an unknown mode
// fails with ErrInvalidArgument, and nothing is sent.
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	cops := make([]client.Op, len(ops))
	for i, o := range ops {
		if isNilOp(o) {
			return nil, fmt.Errorf("%w: op %d of Multi is nil (the Guard of nothing held, or of a sequence-layout Mutex)", ErrInvalidArgument, i)
		}
		co, err := o.clientOp(c.acl)
		if err != nil {
			return nil, err
		}
		cops[i] = co
	}
	res, err := c.conn.Multi(ctx, cops...)
	out := make([]OpResult, len(res))
	for i, r := range res {
		out[i] = OpResult{Path: r.Path, Stat: fromClientStat(r.Stat), Err: r.Err}
	}
	if err != nil {
		return out, publicErr(err)
	}
	return out, nil
}

// isNilOp reports an Op that is nil, or a nil pointer of one of the Op
// types.
func isNilOp(o Op) bool {
	switch o := o.(type) {
	case nil:
		return true
	case *CheckOp:
		return o == nil
	case *CreateOp:
		return o == nil
	case *SetDataOp:
		return o == nil
	case *DeleteOp:
		return o == nil
	}
	return false
}
