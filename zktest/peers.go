package zktest

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// WithPeerNetwork routes the quorum and election traffic of an ensemble's
// servers to each other through proxies that zktest owns on 127.0.0.1, one
// per ordered pair of servers, so that a test can partition the servers from
// each other with Cluster.Partition, Isolate, CutOneWay and SetPeerLatency,
// and undo it with HealNetwork. Client connections are not affected: use a
// Proxy for those. Each server gets its own zoo.cfg in which every other
// server's address is the proxy of that pair; its own address is real.
// The proxies run in the test process, so they cost it some CPU. The default
// is off. It has no effect on a standalone server, and needs a local
// installation (not ZKTEST_SERVERS or Docker).
func WithPeerNetwork() Option {
	return func(o *options) { o.peerNet = true }
}

// peerNet is the proxies between the servers of an ensemble. routes[i][j]
// carries the connections that server i opens to server j: its up
// direction is bytes from i to j, its down direction bytes from j to i.
// ZooKeeper keeps one election connection per pair, opened by either side,
// and followers open the quorum connection to the leader, so the bytes from
// i to j flow on routes[i][j] up and routes[j][i] down.
type peerNet struct {
	routes [][]*Proxy

	mu      sync.Mutex
	cut     [][]bool          // cut[i][j]: bytes from i to j are held
	latency [][]time.Duration // per unordered pair, kept symmetric
}

// newPeerNet starts the proxies for nodes, whose ports must be assigned.
func newPeerNet(nodes []*node) (*peerNet, error) {
	n := len(nodes)
	pn := &peerNet{routes: make([][]*Proxy, n), cut: make([][]bool, n), latency: make([][]time.Duration, n)}
	for i := range nodes {
		pn.routes[i] = make([]*Proxy, n)
		pn.cut[i] = make([]bool, n)
		pn.latency[i] = make([]time.Duration, n)
		for j, peer := range nodes {
			if i == j {
				continue
			}
			p, err := listenProxy([]string{
				net.JoinHostPort("127.0.0.1", strconv.Itoa(peer.quorumPort)),
				net.JoinHostPort("127.0.0.1", strconv.Itoa(peer.electionPort)),
			})
			if err != nil {
				pn.close()
				return nil, err
			}
			p.raw = true
			pn.routes[i][j] = p
		}
	}
	// A connection on i's route to j announces the election address of
	// j's route to i, the way back (see helloRewriter). Set before any
	// proxy accepts, which is what serve starts.
	for i, row := range pn.routes {
		for j, p := range row {
			if p != nil {
				p.hello = map[string]string{p.targets[1]: pn.routes[j][i].Addrs()[1]}
			}
		}
	}
	for _, row := range pn.routes {
		for _, p := range row {
			if p != nil {
				p.serve()
			}
		}
	}
	return pn, nil
}

// serverLine is the zoo.cfg line by which server i reaches peer.
func (pn *peerNet) serverLine(i int, peer *node) string {
	addrs := pn.routes[i][peer.id-1].Addrs()
	_, q, _ := net.SplitHostPort(addrs[0])
	_, e, _ := net.SplitHostPort(addrs[1])
	return fmt.Sprintf("server.%d=127.0.0.1:%s:%s", peer.id, q, e)
}

func (pn *peerNet) close() {
	for _, row := range pn.routes {
		for _, p := range row {
			if p != nil {
				p.close()
			}
		}
	}
}

// apply makes every proxy follow cut and latency; pn.mu is held.
func (pn *peerNet) apply() {
	for i, row := range pn.routes {
		for j, p := range row {
			if p == nil {
				continue
			}
			p.hold(pn.cut[i][j], pn.cut[j][i])
			p.SetLatency(pn.latency[i][j])
		}
	}
}

// peerNet returns the cluster's peer network, or why there is none.
func (c *Cluster) peerNet() (*peerNet, error) {
	switch {
	case c.external:
		return nil, ErrUnmanaged
	case c.peers == nil:
		return nil, ErrNoPeerNetwork
	}
	return c.peers, nil
}

// checkServers rejects indices outside the cluster.
func (c *Cluster) checkServers(ids ...int) error {
	for _, i := range ids {
		if i < 0 || i >= len(c.servers) {
			return fmt.Errorf("zktest: server %d does not exist (the cluster has %d)", i, len(c.servers))
		}
	}
	return nil
}

// Partition splits the ensemble's servers into groups (server indices, as
// for Server): a server hears only the servers of its own group, and a
// server in no group hears nobody. It replaces any earlier cut, keeps
// latencies, and takes effect at once on open connections, which fall
// silent without being closed, as in a network partition; ZooKeeper then
// notices by its own timeouts (syncLimit for a follower and its leader).
// The side with a majority elects a leader if it has none; a server without
// a majority stops serving clients and closes their connections. Clients
// are not cut from any server. It needs WithPeerNetwork (ErrNoPeerNetwork).
func (c *Cluster) Partition(groups ...[]int) error {
	pn, err := c.peerNet()
	if err != nil {
		return err
	}
	group := make([]int, len(c.servers))
	for i := range group {
		group[i] = -1 - i // alone
	}
	for g, members := range groups {
		if err := c.checkServers(members...); err != nil {
			return err
		}
		for _, i := range members {
			if group[i] >= 0 && group[i] != g {
				return fmt.Errorf("zktest: server %d is in two groups of a partition", i)
			}
			group[i] = g
		}
	}
	pn.mu.Lock()
	defer pn.mu.Unlock()
	for i := range pn.cut {
		for j := range pn.cut[i] {
			pn.cut[i][j] = i != j && group[i] != group[j]
		}
	}
	pn.apply()
	return nil
}

// Isolate cuts server i from every other server, both ways, like
// Partition with i alone and the rest together. Isolating the leader makes
// it stop serving once syncLimit passes without a quorum, and the others
// elect a new leader.
func (c *Cluster) Isolate(i int) error {
	if err := c.checkServers(i); err != nil {
		return err
	}
	var rest []int
	for j := range c.servers {
		if j != i {
			rest = append(rest, j)
		}
	}
	return c.Partition([]int{i}, rest)
}

// CutOneWay stops the bytes that server from sends to server to, on every
// connection between them, while the bytes from to to from still flow: an
// asymmetric partition. New connections between the two are not
// established while any direction between them is cut (a TCP handshake
// needs both). It adds to the faults in place; HealNetwork undoes it.
func (c *Cluster) CutOneWay(from, to int) error {
	pn, err := c.peerNet()
	if err != nil {
		return err
	}
	if err := c.checkServers(from, to); err != nil {
		return err
	}
	if from == to {
		return fmt.Errorf("zktest: cut server %d from itself", from)
	}
	pn.mu.Lock()
	defer pn.mu.Unlock()
	pn.cut[from][to] = true
	pn.apply()
	return nil
}

// SetPeerLatency delays every chunk of bytes between servers i and j by d
// in each direction, so a round trip between them gains 2*d; zero removes
// it. Leave d well below syncLimit (WithTickTime times 15) unless the test
// wants the follower to drop out.
func (c *Cluster) SetPeerLatency(i, j int, d time.Duration) error {
	pn, err := c.peerNet()
	if err != nil {
		return err
	}
	if err := c.checkServers(i, j); err != nil {
		return err
	}
	if i == j || d < 0 {
		return fmt.Errorf("zktest: latency %v between servers %d and %d", d, i, j)
	}
	pn.mu.Lock()
	defer pn.mu.Unlock()
	pn.latency[i][j], pn.latency[j][i] = d, d
	pn.apply()
	return nil
}

// HealNetwork undoes Partition, Isolate, CutOneWay and SetPeerLatency:
// held bytes flow again, in order, and connections that survived carry on.
func (c *Cluster) HealNetwork() error {
	pn, err := c.peerNet()
	if err != nil {
		return err
	}
	pn.mu.Lock()
	defer pn.mu.Unlock()
	for i := range pn.cut {
		clear(pn.cut[i])
		clear(pn.latency[i])
	}
	pn.apply()
	return nil
}

// Reachable reports whether server i can currently reach server j and
// hear back: neither direction between them is cut. It is false for a
// cluster without a peer network.
func (c *Cluster) Reachable(i, j int) bool {
	pn, err := c.peerNet()
	if err != nil || c.checkServers(i, j) != nil {
		return false
	}
	pn.mu.Lock()
	defer pn.mu.Unlock()
	return i == j || (!pn.cut[i][j] && !pn.cut[j][i])
}

// quorumSides returns the groups of servers that could form a quorum in
// the current partition: more than half of the servers, every two of which
// reach each other both ways, and not part of a larger such group. Without
// a peer network, or without a cut, it is one group of every server. Under
// a one-way cut there can be several (the leader with one follower, or that
// follower with the other one): which of them ZooKeeper forms is its choice.
func (c *Cluster) quorumSides() [][]int {
	n := len(c.servers)
	var sides []uint
	for set := uint(1)<<n - 1; set > 0; set-- {
		if 2*bits.OnesCount(set) <= n || !c.allReach(set) {
			continue
		}
		if !slices.ContainsFunc(sides, func(larger uint) bool { return set&larger == set }) {
			sides = append(sides, set)
		}
	}
	out := make([][]int, len(sides))
	for k, set := range sides {
		for i := range n {
			if set&(1<<i) != 0 {
				out[k] = append(out[k], i)
			}
		}
	}
	return out
}

// allReach reports whether every two servers of set reach each other.
func (c *Cluster) allReach(set uint) bool {
	for i := range c.servers {
		for j := range c.servers {
			if set&(1<<i) != 0 && set&(1<<j) != 0 && !c.Reachable(i, j) && c.peers != nil {
				return false
			}
		}
	}
	return true
}

// Election protocol versions that carry the sender's address in the first
// message of a connection (QuorumCnxManager's InitialMessage).
const (
	electionProtocolV1 = -65536
	electionProtocolV2 = -65535
	maxHello           = 4096
)

// helloRewriter replaces the address in the first message a server sends on
// an election connection: protocol version (int64), its id (int64), the
// length of the address (int32), then "host:port". A server that receives a
// connection from a lower id closes it and connects back to that address,
// so the address must be the proxy of the reverse route, not the server's
// own port, or the connection back would bypass the peer network.
type helloRewriter struct {
	addr string // what to announce instead
	buf  []byte
}

// feed takes the next bytes of the stream and returns the bytes to forward,
// and whether the first message has passed (later bytes go through as is).
func (h *helloRewriter) feed(b []byte) ([]byte, bool) {
	h.buf = append(h.buf, b...)
	if len(h.buf) < 20 {
		return nil, false
	}
	version := int64(binary.BigEndian.Uint64(h.buf[:8]))
	n := int(int32(binary.BigEndian.Uint32(h.buf[16:20])))
	if (version != electionProtocolV1 && version != electionProtocolV2) || n < 0 || n > maxHello {
		return h.buf, true // not a message this rewrites: pass it on untouched
	}
	if len(h.buf) < 20+n {
		return nil, false
	}
	out := make([]byte, 0, len(h.buf)-n+len(h.addr))
	out = append(out, h.buf[:16]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(h.addr)))
	out = append(out, h.addr...)
	return append(out, h.buf[20+n:]...), true
}
