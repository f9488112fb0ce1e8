package queue

import (
	"bytes"
	"strconv"
)

// PermitTag ends the data of every permit node (see Permits), followed by
// the node's rank once its holder has published one: the most permits the
// live nodes at and ahead of it can hold, in decimal.
const PermitTag = TagPrefix + "k"

// LongestTag is the most zklock adds to a node's data: a permit node's tag
// with a rank of up to 19 digits, or a sequence-layout node's token and
// announcement (see Seq).
const LongestTag = max(len(PermitTag)+19, len(SeqTag)+seqTokenLen+len(Announcer))

// permitTag returns where a permit node's tag begins in data; ok is false
// for data that does not end with one.
func permitTag(data []byte) (int, bool) {
	i := bytes.LastIndex(data, []byte(PermitTag))
	if i < 0 {
		return 0, false
	}
	for _, b := range data[i+len(PermitTag):] {
		if b < '0' || b > '9' {
			return 0, false
		}
	}
	return i, true
}

// PermitRank returns the rank a permit node's data publishes; ok is false
// when it publishes none.
func PermitRank(data []byte) (rank int, ok bool) {
	i, tagged := permitTag(data)
	if !tagged || len(data) == i+len(PermitTag) {
		return 0, false
	}
	rank, err := strconv.Atoi(string(data[i+len(PermitTag):]))
	return rank, err == nil
}

// permitData is a permit node's data: the caller's, the tag, and rank
// when rank >= 0.
func permitData(data []byte, rank int) []byte {
	out := append(append(make([]byte, 0, len(data)+LongestTag), data...), PermitTag...)
	if rank >= 0 {
		out = strconv.AppendInt(out, int64(rank), 10)
	}
	return out
}

// chain is what a permit node knows of the nodes ahead of it: those of its
// listing it has not seen go, in queue order (its predecessor, the one it
// watches, last), with their permits, and bound, the most permits the live
// ones among them can hold. The nodes ahead of ours can only go (the
// server numbers a new node above every other), so every figure here only
// overstates.
type chain struct {
	ahead  []Contender
	weight []int
	bound  int
}

// pred returns the nearest node ahead.
func (c *chain) pred() Contender { return c.ahead[len(c.ahead)-1] }

// learn takes in a rank the predecessor published: it counts the
// predecessor and every node live ahead of it when it was written, which
// is every node live ahead of ours now.
func (c *chain) learn(rank int) { c.bound = min(c.bound, rank) }

// drop forgets the predecessor, seen alive since bound was last lowered
// and deleted since: bound counted it, so its permits come off. (A node
// found already gone when we came to watch it may have gone before the
// rank bound came from was written, which then did not count it: the
// caller lists the queue again instead.)
func (c *chain) drop() {
	last := len(c.ahead) - 1
	c.bound = max(0, c.bound-c.weight[last])
	c.ahead, c.weight = c.ahead[:last], c.weight[:last]
	sum := 0
	for _, w := range c.weight {
		sum += w
	}
	if c.bound = min(c.bound, sum); c.bound == 0 {
		c.ahead, c.weight = nil, nil
	}
}
