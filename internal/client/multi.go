package client

import (
	"context"
	"fmt"
	"time"
)

// Op is one operation of a Multi, made by CreateOp, DeleteOp, SetOp or
// CheckOp.
type Op struct {
	op      int32
	path    string
	data    []byte
	acl     []ACL
	flags   int32
	ttl     int64
	version int32
}

// CreateOp creates a node, as Create does. Its result carries the node's
// Stat when the server returns it: for a container or TTL node always,
// otherwise from ZooKeeper 3.7.2, 3.8.2 and 3.9.0 on (ZOOKEEPER-4026;
// older servers answer a create inside a multi with the name alone).
func CreateOp(path string, data []byte, mode CreateMode, acl []ACL) Op {
	return Op{op: mode.opcode(), path: path, data: data, acl: acl, flags: int32(mode)}
}

// CreateTTLOp is CreateOp for a TTL mode.
func CreateTTLOp(path string, data []byte, mode CreateMode, acl []ACL, ttl time.Duration) Op {
	return Op{op: opCreateTTL, path: path, data: data, acl: acl, flags: int32(mode), ttl: ttl.Milliseconds()}
}

// DeleteOp deletes a node at version (-1: any).
func DeleteOp(path string, version int32) Op { return Op{op: opDelete, path: path, version: version} }

// SetOp sets a node's data at version (-1: any).
func SetOp(path string, data []byte, version int32) Op {
	return Op{op: opSetData, path: path, data: data, version: version}
}

// CheckOp fails the multi unless the node exists at version (-1: any
// version).
func CheckOp(path string, version int32) Op { return Op{op: opCheck, path: path, version: version} }

// OpResult is the outcome of one Op of a Multi.
type OpResult struct {
	// Path is the created node's name (CreateOp).
	Path string
	// Stat is the node's Stat after a SetOp, and after a CreateOp when the
	// server returns it (see CreateOp); zero otherwise.
	Stat Stat
	// Err is nil for an applied op. In a failed multi, the op that failed
	// has its error and every other op ErrRolledBack.
	Err error
}

// Multi applies ops in one transaction: all of them, or none. It returns
// one result per op, in order, and, if the transaction failed, the error
// of the first op that failed, as an *Error naming its path. An op that
// the client refuses (a TTL mode in CreateOp) fails the call unsent.
func (c *Client) Multi(ctx context.Context, ops ...Op) ([]OpResult, error) {
	for _, o := range ops {
		if err := checkOp(o); err != nil {
			return nil, err
		}
	}
	r := newRequest(opMulti, "")
	r.ops, r.failedOp = ops, -1 // none, unless an op's result says so
	if err := c.do(ctx, r); err != nil {
		return nil, err
	}
	res, cause, failed := r.results, r.err, r.failedOp
	release(r)
	if cause == nil {
		return res, nil
	}
	path := ""
	if failed >= 0 && failed < len(ops) {
		path = ops[failed].path
	}
	return res, &Error{Op: "multi", Path: path, Err: cause}
}

func checkOp(o Op) error {
	if err := checkPath("multi", o.path); err != nil {
		return err
	}
	if mode := CreateMode(o.flags); o.op == opCreateTTL && (!mode.ttl() || o.ttl <= 0) {
		return &Error{Op: "multi", Path: o.path, Err: fmt.Errorf("%w: create mode %d with TTL %dms", ErrBadArguments, mode, o.ttl)}
	}
	return nil
}

// appendMulti encodes ops (jute MultiOperationRecord): each op's
// MultiHeader (type, done=false, err=-1) and request record, then a
// header with done=true.
func appendMulti(b []byte, ops []Op) []byte {
	for i := range ops {
		o := &ops[i]
		b = appendInt32(b, o.op)
		b = appendBool(b, false)
		b = appendInt32(b, -1)
		switch o.op {
		case opCreateTTL:
			b = appendInt64(appendCreate(b, o.path, o.data, o.acl, o.flags), o.ttl)
		case opCreate2, opCreateContainer:
			b = appendCreate(b, o.path, o.data, o.acl, o.flags)
		case opDelete, opCheck:
			b = appendInt32(appendString(b, o.path), o.version)
		case opSetData:
			b = appendInt32(appendBuffer(appendString(b, o.path), o.data), o.version)
		}
	}
	b = appendInt32(b, -1)
	b = appendBool(b, true)
	return appendInt32(b, -1)
}

// decodeMulti decodes a MultiResponse into r: a MultiHeader and a record
// per op, exactly one per op sent, then a header with done=true. In a
// failed transaction every op's result is an error result: 0 for ops
// before the failure, the failure's code, and RuntimeInconsistency (-2)
// for ops after it. A reply that is not one of these breaks the
// connection (d.err): the request fails with ErrConnectionLoss.
func decodeMulti(d *decoder, r *request) {
	res := make([]OpResult, 0, r.nops)
	rolledBack := false // an error result was read
	for {
		typ, done, code := d.int32(), d.bool(), d.int32()
		if done || d.err != nil {
			break
		}
		if len(res) == r.nops {
			d.err = errShort
			break
		}
		var o OpResult
		switch typ {
		case opCreate:
			o.Path = d.string()
		case opCreate2:
			o.Path = d.string()
			d.stat(&o.Stat)
		case opSetData:
			d.stat(&o.Stat)
		case opError:
			d.int32() // ErrorResponse repeats the header's code
			o.Err, rolledBack = ErrRolledBack, true
			if code != 0 && code != -2 {
				o.Err = fromCode(code)
				if r.err == nil {
					r.err, r.failedOp = o.Err, len(res)
				}
			}
		}
		res = append(res, o)
	}
	if d.err == nil && len(res) != r.nops {
		// The server answers every op, applied or not: a reply with
		// fewer results is broken, and must not pass for a success.
		d.err = errShort
	}
	if d.err == nil && r.err == nil && rolledBack {
		// Error results mean the transaction was not applied, and a
		// server that rolls one back names the op that failed: results
		// that all say "rolled back" (0 or -2) with no failure are
		// broken, and must not pass for a success either.
		d.err = fmt.Errorf("%w: multi reply rolled back with no op that failed", errShort)
	}
	r.results = res
}
