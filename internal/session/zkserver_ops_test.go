package session

import (
	"encoding/binary"
	"fmt"
	"path"
	"strings"
)

// The scripted server's requests: decoding what the client sends,
// applying it to the tree, encoding the reply (jute, as ZooKeeper 3.8).

// Opcodes and error codes of ZooKeeper's client protocol.
const (
	opDelete          int32 = 2
	opExists          int32 = 3
	opGetData         int32 = 4
	opPing            int32 = 11
	opGetChildren2    int32 = 12
	opCreate2         int32 = 15
	opCreateContainer int32 = 19
	opSetWatches      int32 = 101
	opSetWatches2     int32 = 105
	opCloseSession    int32 = -11

	errNoNode        int32 = -101
	errNodeExists    int32 = -110
	errNotEmpty      int32 = -111
	errUnimplemented int32 = -6
)

// applyLocked applies r (whose body d holds past the header) for session
// sid and returns the reply frame. e.mu is held.
func (e *ensemble) applyLocked(sid int64, r *seenReq, d *dec) []byte {
	code, body := int32(0), []byte(nil)
	nd := e.nodes[r.path]
	switch r.op {
	case opPing, opSetWatches, opSetWatches2:
	case opCloseSession:
		e.endSessionLocked(sid)
		delete(e.sessions, sid)
	case opExists:
		if nd == nil {
			code = errNoNode
			break
		}
		body = e.statLocked(r.path, nd)
	case opGetData:
		if nd == nil {
			code = errNoNode
			break
		}
		body = append(appendBuf(nil, nd.data), e.statLocked(r.path, nd)...)
	case opGetChildren2:
		if nd == nil {
			code = errNoNode
			break
		}
		kids := e.childrenLocked(r.path)
		body = appendI32(nil, int32(len(kids)))
		for _, k := range kids {
			body = appendStr(body, k)
		}
		body = append(body, e.statLocked(r.path, nd)...)
	case opDelete:
		switch {
		case nd == nil:
			code = errNoNode
		case len(e.childrenLocked(r.path)) > 0:
			code = errNotEmpty
		default:
			delete(e.nodes, r.path)
			e.zxid++
		}
	case opCreate2, opCreateContainer:
		code, body = e.createLocked(sid, r, d)
	default:
		code = errUnimplemented
	}
	h := appendI32(appendI64(appendI32(nil, r.xid), e.zxid), code)
	if code != 0 {
		body = nil
	}
	return frame(append(h, body...))
}

// createLocked creates a node: sequential and ephemeral per its flags.
func (e *ensemble) createLocked(sid int64, r *seenReq, d *dec) (int32, []byte) {
	p := d.str()
	data := d.buf()
	for range d.i32() { // the ACL: perms, scheme, id
		d.i32()
		d.str()
		d.str()
	}
	flags := d.i32()
	parent := e.nodes[path.Dir(p)]
	if parent == nil {
		return errNoNode, nil
	}
	if flags&2 != 0 { // sequential
		p += fmt.Sprintf("%010d", parent.seq)
		parent.seq++
	}
	if e.nodes[p] != nil {
		return errNodeExists, nil
	}
	e.zxid++
	nd := &node{data: data, czxid: e.zxid}
	if flags&1 != 0 { // ephemeral
		nd.owner = sid
	}
	e.nodes[p] = nd
	r.path = p
	return 0, append(appendStr(nil, p), e.statLocked(p, nd)...)
}

func (e *ensemble) childrenLocked(p string) []string {
	var kids []string
	for q := range e.nodes {
		if q != "/" && path.Dir(q) == p {
			kids = append(kids, strings.TrimPrefix(q[len(p):], "/"))
		}
	}
	return kids
}

// statLocked is a node's Stat: czxid, mzxid, ctime, mtime, version,
// cversion, aversion, ephemeralOwner, dataLength, numChildren, pzxid.
func (e *ensemble) statLocked(p string, nd *node) []byte {
	b := appendI64(appendI64(nil, nd.czxid), nd.czxid)
	b = appendI64(appendI64(b, 0), 0)
	b = appendI32(appendI32(appendI32(b, 0), nd.seq), 0)
	b = appendI64(b, nd.owner)
	b = appendI32(appendI32(b, int32(len(nd.data))), int32(len(e.childrenLocked(p))))
	return appendI64(b, nd.czxid)
}

// dec reads jute from b; a short body reads as zeros.
type dec struct{ b []byte }

func (d *dec) i32() int32 {
	if len(d.b) < 4 {
		d.b = nil
		return 0
	}
	v := int32(binary.BigEndian.Uint32(d.b))
	d.b = d.b[4:]
	return v
}

func (d *dec) i64() int64 {
	if len(d.b) < 8 {
		d.b = nil
		return 0
	}
	v := int64(binary.BigEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *dec) buf() []byte {
	n := d.i32()
	if n < 0 || int(n) > len(d.b) {
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.buf()) }

func appendI32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendI64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }
func appendBuf(b, v []byte) []byte       { return append(appendI32(b, int32(len(v))), v...) }
func appendStr(b []byte, v string) []byte {
	return append(appendI32(b, int32(len(v))), v...)
}

func frame(body []byte) []byte { return append(appendI32(nil, int32(len(body))), body...) }
