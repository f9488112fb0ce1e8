package client

import "time"

// Opcodes of ZooKeeper's client protocol (ZooDefs.OpCode, ZooKeeper 3.8).
const (
	opCreate          int32 = 1
	opDelete          int32 = 2
	opExists          int32 = 3
	opGetData         int32 = 4
	opSetData         int32 = 5
	opGetACL          int32 = 6
	opSetACL          int32 = 7
	opSync            int32 = 9
	opPing            int32 = 11
	opGetChildren2    int32 = 12
	opCheck           int32 = 13
	opMulti           int32 = 14
	opCreate2         int32 = 15
	opRemoveWatches   int32 = 18
	opCreateContainer int32 = 19
	opCreateTTL       int32 = 21
	opAuth            int32 = 100
	opSetWatches      int32 = 101
	opSetWatches2     int32 = 105
	opAddWatch        int32 = 106
	opCloseSession    int32 = -11
	opError           int32 = -1 // a failed op's result inside a multi response
)

// Reserved xids. The server answers a request with the request's xid;
// these mark packets that are not matched in order with ordinary requests:
// a watch notification answers nothing, and the server handles an auth
// packet as soon as it reads it, so its reply can overtake the replies of
// requests sent before it. Ordinary requests use xids from 1 up.
const (
	xidNotification int32 = -1
	xidPing         int32 = -2
	xidAuth         int32 = -4
	xidSetWatches   int32 = -8
)

const (
	// DefaultMaxPacket is the servers' default jute.maxbuffer
	// (0xfffff): the largest request a server accepts, and the largest
	// packet ZooKeeper's Java client accepts from one (3.8's
	// ClientCnxnSocket.readLength refuses a longer length, its limit the
	// client's own jute.maxbuffer property, 0xfffff by default).
	DefaultMaxPacket = 1<<20 - 1

	// MaxMaxPacket bounds Config.MaxPacket: 64 MiB less the length.
	MaxMaxPacket = 64<<20 - 4

	// packetSlack is what a reply may exceed Config.MaxPacket by: a
	// getData reply carries a Stat and a reply header that its request,
	// the largest the servers accept, did not (up to 66 bytes more).
	packetSlack = 1 << 10

	// maxFrame is the longest frame the client reads by default.
	maxFrame = DefaultMaxPacket + packetSlack

	// passwordLen is the length of the session password a client sends
	// before it has one (ZooKeeper's servers issue 16-byte passwords).
	passwordLen = 16

	// maxPing is the longest the client stays silent on a connection, as
	// the Java client: a ping is sent after a third of the negotiated
	// session timeout without a send, and at least this often.
	maxPing = 10 * time.Second

	// setWatchesBatch bounds the bytes of watched paths in one
	// setWatches packet, as the Java client does, so that restoring many
	// watches stays far below the server's packet limit.
	setWatchesBatch = 128 << 10
)

// CreateMode is the kind of node Create makes, with ZooKeeper's numbering
// (CreateMode.toFlag). Sequential modes append a ten-digit counter to the
// name; ephemeral nodes are deleted when their session ends; a container is
// deleted by the server once it has had children and has none; a TTL node
// is deleted when it has had no children and no change for its TTL.
type CreateMode int32

// The create modes.
const (
	ModePersistent              CreateMode = 0
	ModeEphemeral               CreateMode = 1
	ModePersistentSequential    CreateMode = 2
	ModeEphemeralSequential     CreateMode = 3
	ModeContainer               CreateMode = 4
	ModePersistentTTL           CreateMode = 5
	ModePersistentSequentialTTL CreateMode = 6
)

// ttl reports whether m needs a TTL.
func (m CreateMode) ttl() bool { return m == ModePersistentTTL || m == ModePersistentSequentialTTL }

// opcode is the request that creates a node of mode m: containers and TTL
// nodes have their own; every other create is create2, whose reply carries
// the node's Stat (its czxid and ephemeralOwner) as well as its name.
func (m CreateMode) opcode() int32 {
	switch {
	case m == ModeContainer:
		return opCreateContainer
	case m.ttl():
		return opCreateTTL
	}
	return opCreate2
}

// opName names an opcode in errors and logs.
func opName(op int32) string {
	switch op {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
		return "create"
	case opDelete:
		return "delete"
	case opExists:
		return "exists"
	case opGetData:
		return "get"
	case opSetData:
		return "set"
	case opGetACL:
		return "get acl"
	case opSetACL:
		return "set acl"
	case opSync:
		return "sync"
	case opPing:
		return "ping"
	case opGetChildren2:
		return "children"
	case opCheck:
		return "check"
	case opMulti:
		return "multi"
	case opRemoveWatches:
		return "remove watches"
	case opAuth:
		return "auth"
	case opSetWatches, opSetWatches2:
		return "set watches"
	case opAddWatch:
		return "add watch"
	case opCloseSession:
		return "close session"
	}
	return "op"
}
