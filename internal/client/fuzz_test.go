package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// chunks reads data a few bytes at a time, as a network does.
type chunks struct {
	data []byte
	size int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.size, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// FuzzFrames feeds arbitrary bytes, in arbitrary chunks, to the frame
// reader and every frame it yields to the decoders of the connect
// response, the reply header, a watch notification and every reply body:
// none may panic, allocate beyond what the input can describe, or loop.
func FuzzFrames(f *testing.F) {
	frame := func(body []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	hdr := func(xid int32) []byte { return appendInt32(appendInt64(appendInt32(nil, xid), 5), 0) }
	f.Add(frame(appendBuffer(appendInt64(appendInt32(appendInt32(nil, 0), 4000), 1), make([]byte, 16))), uint8(3))
	f.Add(frame(appendString(appendInt32(appendInt32(hdr(-1), 3), 3), "/a/b")), uint8(1))
	f.Add(frame(appendStrings(hdr(1), []string{"a", "b"})), uint8(200))
	f.Add(frame(appendInt32(appendBool(appendInt32(hdr(1), 15), false), 0)), uint8(7))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint8(2))
	f.Add(frame(appendInt32(hdr(1), 0x7fffffff)), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		fr := newFrameReader(&chunks{data: data, size: int(size%64) + 1}, nil)
		for i := 0; ; i++ {
			body, err := fr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errShort) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if i > len(data)/4 {
				t.Fatalf("%d frames from %d bytes", i, len(data))
			}
			decodeAll(bytes.Clone(body))
		}
	})
}

// decodeAll runs every decoder on body.
func decodeAll(body []byte) {
	_, _ = decodeConnectResponse(body)
	d := decoder{b: body}
	decodeReplyHeader(&d)
	rest := d.b
	ev := decoder{b: rest}
	decodeEvent(&ev)
	for _, op := range []int32{opCreate2, opCreateContainer, opCreateTTL, opExists, opGetData, opSetData,
		opGetChildren2, opGetACL, opSetACL, opSync, opMulti, opDelete, opAddWatch} {
		r := &request{op: op, nops: 3, failedOp: -1, watch: &Watch{}}
		d := decoder{b: rest}
		decodeReply(&d, r)
	}
}
