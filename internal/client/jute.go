package client

import (
	"encoding/binary"
	"errors"
	"math"
)

// ZooKeeper's records are serialized with jute's binary archive: big-endian
// int32/int64, a bool as one byte, a buffer or ustring as an int32 length
// (-1 for null) followed by the bytes, a vector as an int32 count (-1 for
// null) followed by its elements, a record as its fields in order.

// The append* functions encode one jute value at the end of b.

func appendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

func appendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// appendBuffer encodes p as a buffer; nil is encoded as null (-1), which
// the server reads as an empty node value.
func appendBuffer(b, p []byte) []byte {
	if p == nil {
		return appendInt32(b, -1)
	}
	b = appendInt32(b, int32(len(p)))
	return append(b, p...)
}

func appendString(b []byte, s string) []byte {
	b = appendInt32(b, int32(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = appendInt32(b, int32(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

func appendACL(b []byte, acl []ACL) []byte {
	b = appendInt32(b, int32(len(acl)))
	for _, a := range acl {
		b = appendInt32(b, a.Perms)
		b = appendString(b, a.Scheme)
		b = appendString(b, a.ID)
	}
	return b
}

// errShort is the decoder's error for a record cut short or a length that
// cannot be right: the frame is corrupt, and so is the connection.
var errShort = errors.New("zklock: zk: malformed packet")

// decoder reads jute values from one frame body. Its first failure sticks:
// later reads return zero values, so a record is decoded without a check
// after every field, and err is looked at once at the end. It never panics,
// and allocates in proportion to the body: a vector's count is refused if
// its elements, at their smallest encoding, would not fit in the bytes
// left, so a vector of n elements costs at most n times the element's size
// in memory for 4n (strings) or 12n (ACLs) bytes of body, 4 bytes for each
// byte, and its strings their own bytes. The frame limit (Config.MaxPacket)
// bounds the body.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errShort
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) int32() int32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

func (d *decoder) int64() int64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

func (d *decoder) bool() bool {
	p := d.take(1)
	return p != nil && p[0] != 0
}

// view returns a buffer without copying it: valid until the frame is
// released. Null and empty are both nil.
func (d *decoder) view() []byte {
	n := d.int32()
	if n <= 0 {
		return nil
	}
	return d.take(int(n))
}

// buffer returns a copy of a buffer: a node's value handed to the caller.
// A null buffer is nil; an empty one is empty and not nil.
func (d *decoder) buffer() []byte {
	n := d.int32()
	if n < 0 || d.err != nil {
		return nil
	}
	p := d.take(int(n))
	if p == nil {
		return nil
	}
	return append(make([]byte, 0, n), p...)
}

func (d *decoder) string() string { return string(d.view()) }

// count reads a vector's length: -1 (null) is 0, and a count larger than
// the remaining bytes could hold, at min bytes an element, is corrupt.
func (d *decoder) count(min int) int {
	n := d.int32()
	switch {
	case n < 0:
		return 0
	case int64(n)*int64(min) > int64(len(d.b)):
		d.err = errShort
		return 0
	}
	return int(n)
}

func (d *decoder) strings() []string {
	n := d.count(4)
	if n == 0 {
		return []string{}
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.string()
	}
	return ss
}

func (d *decoder) acl() []ACL {
	n := d.count(12)
	acl := make([]ACL, n)
	for i := range acl {
		acl[i] = ACL{Perms: d.int32(), Scheme: d.string(), ID: d.string()}
	}
	return acl
}

// clampMillis converts a duration to whole milliseconds in an int32, the
// unit of ZooKeeper's session timeout.
func clampMillis(ms int64) int32 { return int32(min(max(ms, 0), math.MaxInt32)) }
