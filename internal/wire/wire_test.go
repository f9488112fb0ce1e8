package wire

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type recorder struct {
	mu        sync.Mutex
	sid       int64
	timeout   time.Duration
	replies   []time.Time
	created   map[string][2]int64
	sending   []string
	connected time.Time
}

func (r *recorder) Connected(sid int64, timeout time.Duration, sent time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sid, r.timeout, r.connected = sid, timeout, sent
}

func (r *recorder) Replied(sent, _ time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replies = append(r.replies, sent)
}

func (r *recorder) Sending(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sending = append(r.sending, path)
}

func (r *recorder) Created(path string, zxid, sid int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.created[path] = [2]int64{zxid, sid}
}

func frame(parts ...any) []byte {
	var body []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int32:
			body = binary.BigEndian.AppendUint32(body, uint32(v))
		case int64:
			body = binary.BigEndian.AppendUint64(body, uint64(v))
		case string:
			body = binary.BigEndian.AppendUint32(body, uint32(len(v)))
			body = append(body, v...)
		}
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// TestObserver feeds a scripted exchange through the wrapper, one byte per
// read, and checks what it learns: the negotiated timeout and session, one
// reply per request (not per watch event), and the create's zxid.
func TestObserver(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	r := &recorder{created: map[string][2]int64{}}
	c := Wrap(client, r, time.Minute)
	defer c.Close()

	const sid = int64(0x1000abc)
	go func() {
		// The server side: read whatever the client sends, answer a script.
		buf := make([]byte, 4096)
		for i := 0; i < 3; i++ {
			if _, err := server.Read(buf); err != nil {
				return
			}
		}
	}()
	_, err := c.Write(frame(int32(0), int64(0), int32(4000), int64(0), string(make([]byte, 16))))
	require.NoError(t, err)
	sentCreate := time.Now()
	_, err = c.Write(frame(int32(1), int32(1), "/a/_c_x-lock-", "", int32(0), int32(3)))
	require.NoError(t, err)
	_, err = c.Write(frame(int32(-2), int32(11)))
	require.NoError(t, err)

	script := append(frame(int32(0), int32(3000), sid, "password0123456"),
		frame(int32(-1), int64(0), int32(0), int32(4), int32(3), "/w")...) // watch event: not a reply
	script = append(script, frame(int32(1), int64(0x55), int32(0), "/a/_c_x-lock-0000000001")...)
	script = append(script, frame(int32(-2), int64(0x55), int32(0))...)
	go func() {
		for _, b := range script {
			if _, err := server.Write([]byte{b}); err != nil {
				return
			}
		}
	}()
	beforeReplies := time.Now()
	buf := make([]byte, 1)
	for i := 0; i < len(script); i++ {
		_, err := c.Read(buf)
		require.NoError(t, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Equal(t, sid, r.sid)
	require.Equal(t, 3*time.Second, r.timeout)
	require.Len(t, r.replies, 2, "a watch event is not a reply")
	// Anchored at the create's send time, not at the reply's arrival.
	require.False(t, r.replies[0].Before(sentCreate))
	require.True(t, r.replies[0].Before(beforeReplies), "a reply is anchored at its request's send time")
	require.Equal(t, map[string][2]int64{"/a/_c_x-lock-": {0x55, sid}}, r.created,
		"a create is reported by its request path, as sent")
	require.Equal(t, []string{"/a/_c_x-lock-"}, r.sending, "the create's send is reported, a ping's is not")
}

// TestHandshakeTimeout: a server that accepts but never answers the connect
// request has its connection closed.
func TestHandshakeTimeout(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := Wrap(client, &recorder{created: map[string][2]int64{}}, 50*time.Millisecond)
	_, err := c.Read(make([]byte, 4))
	require.Error(t, err, "read must fail once the handshake deadline closes the connection")
}
