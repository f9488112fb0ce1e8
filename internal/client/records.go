package client

import "time"

// Stat is a node's metadata (jute org.apache.zookeeper.data.Stat). Times
// are milliseconds since the Unix epoch, as the server keeps them.
type Stat struct {
	Czxid          int64 // zxid of the create: increases with every node created, across parents and restarts
	Mzxid          int64 // zxid of the last change of the data
	Ctime          int64
	Mtime          int64
	Version        int32 // changes of the data
	Cversion       int32 // changes of the children
	Aversion       int32 // changes of the ACL
	EphemeralOwner int64 // the owning session of an ephemeral node; 0 for others
	DataLength     int32
	NumChildren    int32
	Pzxid          int64 // zxid of the last change of the children
}

func (d *decoder) stat(st *Stat) {
	st.Czxid = d.int64()
	st.Mzxid = d.int64()
	st.Ctime = d.int64()
	st.Mtime = d.int64()
	st.Version = d.int32()
	st.Cversion = d.int32()
	st.Aversion = d.int32()
	st.EphemeralOwner = d.int64()
	st.DataLength = d.int32()
	st.NumChildren = d.int32()
	st.Pzxid = d.int64()
}

// connectRequest is the first packet a client sends on a connection: a new
// session (id 0 and a zero password) or the resumption of one.
type connectRequest struct {
	lastZxid  int64
	timeout   time.Duration
	sessionID int64
	password  []byte
}

// append encodes the request as a frame body. The trailing readOnly flag
// (false: this client never talks to a read-only server) marks a client
// newer than 3.3; the server then appends the same flag to its response.
func (r *connectRequest) append(b []byte) []byte {
	b = appendInt32(b, 0) // protocol version
	b = appendInt64(b, r.lastZxid)
	b = appendInt32(b, clampMillis(r.timeout.Milliseconds()))
	b = appendInt64(b, r.sessionID)
	pw := r.password
	if pw == nil {
		pw = make([]byte, passwordLen)
	}
	b = appendBuffer(b, pw)
	return appendBool(b, false)
}

// connectResponse is the server's answer to a connectRequest. A timeout of
// 0 (and a session id of 0) means the server refused to resume the
// session: it has expired.
type connectResponse struct {
	timeout   time.Duration
	sessionID int64
	password  []byte
}

func decodeConnectResponse(body []byte) (connectResponse, error) {
	d := decoder{b: body}
	d.int32() // protocol version
	r := connectResponse{
		timeout:   time.Duration(d.int32()) * time.Millisecond,
		sessionID: d.int64(),
		password:  d.buffer(),
	}
	// The readOnly flag may follow; it is not read (see append above).
	return r, d.err
}

// expired reports whether the response refuses the session.
func (r connectResponse) expired() bool { return r.timeout <= 0 || r.sessionID == 0 }

// replyHeader starts every packet from the server after the connect
// response.
type replyHeader struct {
	xid  int32
	zxid int64
	err  int32
}

func decodeReplyHeader(d *decoder) replyHeader {
	return replyHeader{xid: d.int32(), zxid: d.int64(), err: d.int32()}
}

// decodeEvent decodes a watch notification's body (jute WatcherEvent: type,
// keeper state, path) after its reply header.
func decodeEvent(d *decoder) (EventType, string) {
	typ := EventType(d.int32())
	d.int32() // keeper state: SyncConnected for every node event
	return typ, d.string()
}
