package zktest

import "encoding/binary"

// upFramer follows ZooKeeper's framing across chunks: each packet is a
// 4-byte big-endian length and a body; the first packet on a connection is
// the ConnectRequest (or, from the server, its response), and every later
// body starts with an int32 xid, then, from the client, an int32 opcode.
// match is asked about the opcode, or about the xid when byXid is set (the
// server-to-client direction, whose replies carry no opcode).
type upFramer struct {
	byXid   bool
	packets int      // packets completed; packet 0 is the ConnectRequest
	head    [12]byte // length, xid, opcode, as they arrive
	nhead   int      // bytes of head filled
	bodyLen int
	seen    int  // body bytes seen of the current packet
	checked bool // the current packet's opcode has been matched
	cut     bool // the current packet matched: cut the link at its end
	broken  bool // a negative length: stop interpreting the stream
}

// feed consumes b, asking match about each request's opcode once, and
// connect (if not nil) about the ConnectRequest once it is complete. It
// returns how many bytes of b to forward before cutting the link (the end of
// a matching packet), or -1 when no cut falls within b.
func (f *upFramer) feed(b []byte, match func(opcode int32) bool, connect func() bool) int {
	for i := 0; i < len(b) && !f.broken; {
		if f.nhead < 4 {
			n := copy(f.head[f.nhead:4], b[i:])
			f.nhead += n
			i += n
			if f.nhead == 4 {
				f.bodyLen = int(int32(binary.BigEndian.Uint32(f.head[:4])))
				f.broken = f.bodyLen < 0
			}
		} else {
			n := min(len(b)-i, f.bodyLen-f.seen)
			if f.seen < 8 {
				copy(f.head[4+f.seen:], b[i:i+min(n, 8-f.seen)])
			}
			f.seen += n
			i += n
			f.check(match)
		}
		if f.nhead == 4 && !f.broken && f.seen == f.bodyLen {
			cut := f.cut || (f.packets == 0 && connect != nil && connect())
			f.packets++
			f.nhead, f.seen, f.checked, f.cut = 0, 0, false, false
			if cut {
				return i
			}
		}
	}
	return -1
}

// check asks match about the current request once its opcode is known.
func (f *upFramer) check(match func(opcode int32) bool) {
	if f.checked || f.packets == 0 || f.seen < 8 {
		return
	}
	f.checked = true
	at := 8
	if f.byXid {
		at = 4
	}
	f.cut = match(int32(binary.BigEndian.Uint32(f.head[at : at+4])))
}
