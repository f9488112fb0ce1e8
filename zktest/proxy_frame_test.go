package zktest

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// lengthPrefix is the 4-byte big-endian length before every packet body.
func lengthPrefix(body []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(len(body)))
}

func request(xid, op int32, payload int) []byte {
	body := binary.BigEndian.AppendUint32(nil, uint32(xid))
	body = binary.BigEndian.AppendUint32(body, uint32(op))
	body = append(body, make([]byte, payload)...)
	return append(lengthPrefix(body), body...)
}

func TestUpFramerFindsTheEndOfTheMatchingRequest(t *testing.T) {
	connectReq := append(lengthPrefix(make([]byte, 44)), make([]byte, 44)...)
	var stream []byte
	stream = append(stream, connectReq...)
	stream = append(stream, request(-2, 11, 0)...) // ping
	stream = append(stream, request(1, 4, 20)...)  // getData
	stream = append(stream, request(2, 1, 33)...)  // create: the match
	end := len(stream)
	stream = append(stream, request(3, 1, 5)...) // a second create, never forwarded

	// Every split of the stream into two chunks must give the same cut.
	for split := 0; split <= len(stream); split++ {
		var f upFramer
		var asked []int32
		match := func(op int32) bool { asked = append(asked, op); return op == 1 }
		cut := -1
		if n := f.feed(stream[:split], match, nil); n >= 0 {
			cut = n
		} else if n := f.feed(stream[split:], match, nil); n >= 0 {
			cut = split + n
		}
		require.Equal(t, end, cut, "split at %d", split)
		require.Equal(t, []int32{11, 4, 1}, asked, "split at %d: opcodes asked once each, connect skipped", split)
	}
}

func TestUpFramerByteByByte(t *testing.T) {
	stream := append(append(lengthPrefix(make([]byte, 4)), make([]byte, 4)...), request(7, 5, 3)...)
	var f upFramer
	for i, b := range stream {
		n := f.feed([]byte{b}, func(op int32) bool { return op == 5 }, nil)
		if i < len(stream)-1 {
			require.Equal(t, -1, n, "byte %d", i)
		} else {
			require.Equal(t, 1, n)
		}
	}
}

// TestReplyFramerFindsTheMatchingReply: the server-to-client direction is
// matched by xid (the body's first int32), the ConnectResponse skipped.
func TestReplyFramerFindsTheMatchingReply(t *testing.T) {
	reply := func(xid int32, payload int) []byte {
		body := binary.BigEndian.AppendUint32(nil, uint32(xid))
		body = append(body, make([]byte, 12+payload)...) // zxid, err, record
		return append(lengthPrefix(body), body...)
	}
	stream := append(lengthPrefix(make([]byte, 36)), make([]byte, 36)...)
	stream = append(stream, reply(-1, 20)...) // a notification
	stream = append(stream, reply(-8, 0)...)  // the first setWatches reply: the match
	end := len(stream)
	stream = append(stream, reply(-8, 0)...) // the second, never forwarded
	for split := 0; split <= len(stream); split++ {
		f := upFramer{byXid: true}
		var asked []int32
		seen := 0
		match := func(xid int32) bool { asked = append(asked, xid); seen++; return xid == -8 && seen == 2 }
		cut := -1
		if n := f.feed(stream[:split], match, nil); n >= 0 {
			cut = n
		} else if n := f.feed(stream[split:], match, nil); n >= 0 {
			cut = split + n
		}
		require.Equal(t, end, cut, "split at %d", split)
		require.Equal(t, []int32{-1, -8}, asked, "split at %d", split)
	}
}
