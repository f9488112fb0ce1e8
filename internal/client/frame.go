package client

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Every packet in either direction is a 4-byte big-endian length and that
// many bytes of body.

// beginFrame appends a placeholder for a frame's length; endFrame fills it
// in once the body has been appended after it.
func beginFrame(b []byte) ([]byte, int) { return append(b, 0, 0, 0, 0), len(b) }

func endFrame(b []byte, at int) []byte {
	binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// frameReader splits the byte stream from the server into frame bodies,
// reading through a buffer it reuses, so that a burst of small replies
// costs one read and no allocation. It notes when each read returned: a
// frame's readAt is when the read that completed it returned, the moment
// the reply is known to have arrived.
type frameReader struct {
	r      io.Reader
	limit  int // the longest frame body accepted
	buf    []byte
	start  int // the unread bytes are buf[start:end]
	end    int
	readAt time.Time
	// before is called once per frame, before its first read of r (to
	// set the deadline of the whole frame): a peer that trickles a frame
	// byte by byte cannot keep the connection alive past it. nil for
	// none.
	before func()
}

const frameBuf = 64 << 10

func newFrameReader(r io.Reader, before func()) *frameReader {
	return &frameReader{r: r, limit: maxFrame, buf: make([]byte, frameBuf), before: before}
}

// next returns the next frame's body. The body is valid until the next
// call; its decoders copy what they keep. A length that is negative or
// above the limit is an error, found before anything is allocated for the
// frame: the stream cannot be trusted after it.
func (f *frameReader) next() ([]byte, error) {
	if f.before != nil && !f.buffered() {
		f.before()
	}
	if err := f.fill(4); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(f.buf[f.start:])))
	if n < 0 || n > f.limit {
		if head := f.buf[f.start : f.start+4]; isText(head) {
			return nil, fmt.Errorf("%w: %w", errShort, &NotZooKeeperError{Head: string(head)})
		}
		return nil, fmt.Errorf("%w: frame length %d", errShort, n)
	}
	if err := f.fill(4 + n); err != nil {
		return nil, err
	}
	body := f.buf[f.start+4 : f.start+4+n : f.start+4+n]
	f.start += 4 + n
	return body, nil
}

// buffered reports whether a whole frame is already buffered.
func (f *frameReader) buffered() bool {
	if f.end-f.start < 4 {
		return false
	}
	n := int(int32(binary.BigEndian.Uint32(f.buf[f.start:])))
	return n >= 0 && f.end-f.start >= 4+n
}

// fill reads until n unread bytes are buffered, moving the unread bytes to
// the front, or into a larger buffer, when they would not fit.
func (f *frameReader) fill(n int) error {
	for f.end-f.start < n {
		if f.start+n > len(f.buf) {
			f.compact(n)
		}
		m, err := f.r.Read(f.buf[f.end:])
		if m > 0 {
			f.end += m
			f.readAt = time.Now()
		}
		if err != nil && f.end-f.start < n {
			if err == io.EOF && f.end > f.start {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// compact makes room for n bytes from f.start. A buffer grown for a large
// frame is given back once the frames in it have been read.
func (f *frameReader) compact(n int) {
	buf := f.buf
	if n > len(buf) || (len(buf) > frameBuf && n <= frameBuf) {
		buf = make([]byte, max(n, frameBuf))
	}
	f.end = copy(buf, f.buf[f.start:f.end])
	f.start = 0
	f.buf = buf
}

// NotZooKeeperError: the peer's first bytes are text where a frame length
// belongs, so it speaks another protocol: an HTTP server's "HTTP" reads as
// a length of 1213486160 (ZooKeeper's AdminServer, on 8080 by default,
// answers a client's connect that way).
type NotZooKeeperError struct {
	Head string // the four bytes
}

func (e *NotZooKeeperError) Error() string {
	return fmt.Sprintf("not a ZooKeeper client port: it answered %q", e.Head+"…")
}

// isText reports whether b is printable ASCII: no frame length the
// reader accepts is (at most MaxMaxPacket plus 1 KiB, 64 MiB: a first
// byte of 0x04 or less).
func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
