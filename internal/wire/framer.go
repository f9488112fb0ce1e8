package wire

import "encoding/binary"

// framer splits a byte stream into length-prefixed frames, keeping at most
// keep bytes of each body and skipping the rest.
type framer struct {
	keep   int
	first  bool   // the next frame is the connection's first
	hdr    []byte // partial length prefix
	inBody bool   // the prefix is complete and body bytes are due
	remain int    // body bytes still to come
	body   []byte // retained prefix of the current body
}

func (f *framer) feed(p []byte, frame func(body []byte, first bool)) {
	for len(p) > 0 {
		if !f.inBody {
			p = f.readPrefix(p)
		} else {
			n := min(f.remain, len(p))
			if room := f.keep - len(f.body); room > 0 {
				f.body = append(f.body, p[:min(n, room)]...)
			}
			f.remain -= n
			p = p[n:]
		}
		if f.inBody && f.remain == 0 {
			f.emit(frame)
		}
	}
}

func (f *framer) readPrefix(p []byte) []byte {
	n := min(4-len(f.hdr), len(p))
	f.hdr = append(f.hdr, p[:n]...)
	if len(f.hdr) == 4 {
		f.remain = max(int(int32(binary.BigEndian.Uint32(f.hdr))), 0)
		f.hdr = f.hdr[:0]
		f.body = f.body[:0]
		f.inBody = true
	}
	return p[n:]
}

func (f *framer) emit(frame func(body []byte, first bool)) {
	first := f.first
	f.first = false
	f.inBody = false
	frame(f.body, first)
	f.body = f.body[:0]
}
