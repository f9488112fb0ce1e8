package queue

import (
	"cmp"
	"crypto/rand"
	"math"
	pathpkg "path"
	"slices"
	"strconv"
	"strings"

	"github.com/zklock/zklock/internal/errs"
)

// Node kinds: the name that precedes the sequence number in a contender's
// node name. The first group are Apache Curator's, the rest Kazoo's.
const (
	KindLock  = "lock-"    // Curator InterProcessMutex, LeaderSelector
	KindRead  = "__READ__" // Curator InterProcessReadWriteLock reader
	KindWrite = "__WRIT__" // Curator InterProcessReadWriteLock writer
	KindLease = "lease-"   // Curator InterProcessSemaphoreV2 lease
	KindLatch = "latch-"   // Curator LeaderLatch

	KindKazooLock  = "__lock__"  // Kazoo Lock and WriteLock
	KindKazooRLock = "__rlock__" // Kazoo ReadLock
)

// The children of a semaphore's path (Curator InterProcessSemaphoreV2):
// the parents of its mutex and of its leases. Foreign takes them for kinds.
const (
	LocksChild  = "locks"
	LeasesChild = "leases"
)

// KindSeqLock ends in KindLock: it comes first, so that Parse tells them apart.
var kinds = []string{KindRead, KindWrite, KindKazooRLock, KindKazooLock, KindSeqLock, KindLock, KindLease, KindLatch, KindPermit}

// ProtectedPrefix starts the name of every node created with protection:
// "_c_" + a version 4 UUID + "-" (Curator's ProtectedUtils layout, 40 bytes).
const ProtectedPrefix = "_c_"

// Contender is one parsed child of a queue's parent node.
type Contender struct {
	Name string // the child's name, without the parent path
	Kind string // one of the Kind constants
	Seq  int32  // the server-assigned sequence number (signed: it wraps at 2^31)
}

// Parse reads a child name of the form <anything><kind><seq>, where seq is
// ZooKeeper's sequence suffix: %010d of a signed 32-bit counter, so ten
// digits, or once the counter has wrapped "-" and nine or ten digits. Names
// of no known kind are not contenders: ok is false.
func Parse(name string) (c Contender, ok bool) {
	// Look only at the end of the name: the sequence suffix, then the kind
	// just before it. Scanning the whole name for every kind made sorting a
	// 1,000-node queue cost 0.4 ms per wake-up.
	for _, n := range [2]int{10, 11} {
		if len(name) < n {
			break
		}
		head := name[:len(name)-n]
		seq, ok := parseSeq(name[len(name)-n:])
		if !ok {
			continue
		}
		for _, k := range kinds {
			if strings.HasSuffix(head, k) {
				return Contender{Name: name, Kind: k, Seq: seq}, true
			}
		}
	}
	return Contender{}, false
}

func parseSeq(s string) (int32, bool) {
	digits := s
	if len(s) > 0 && s[0] == '-' {
		digits = s[1:] // %010d pads "-7" to "-000000007"; large negatives take 10 digits
	}
	if len(s) != 10 && !(len(digits) == 10 && len(s) == 11) {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil
}

// Sort parses names, keeps the contenders whose kind is in accept, and orders
// them by sequence number. A parent's sequence counter is a signed 32-bit
// value that wraps from 2^31-1 to -2^31; when both very high and negative
// numbers are present, the negative ones were assigned after the wrap and
// sort last. Sequence numbers tie only when a node was placed beside a
// sequential one (Queue.Join: a write-to-read downgrade); then a writer sorts
// before the other kinds, and equal kinds by name, so every client sees the
// same order.
func Sort(names []string, accept ...string) []Contender {
	out, o := parseAll(names, accept)
	slices.SortFunc(out, o.cmp)
	return out
}

// order is Sort's ordering for one listing: whether its sequence numbers
// wrapped.
type order struct{ wrapped bool }

// parseAll keeps the contenders among names whose kind is in accept, in
// listing order, and the ordering that applies to them.
func parseAll(names []string, accept []string) ([]Contender, order) {
	out := make([]Contender, 0, len(names))
	var hi, lo bool
	for _, n := range names {
		c, ok := Parse(n)
		if !ok || !slices.Contains(accept, c.Kind) {
			continue
		}
		hi = hi || c.Seq > math.MaxInt32/2
		lo = lo || c.Seq < math.MinInt32/2
		out = append(out, c)
	}
	return out, order{wrapped: hi && lo}
}

func (o order) key(c Contender) int64 {
	if o.wrapped && c.Seq < 0 {
		return int64(c.Seq) + 1<<32
	}
	return int64(c.Seq)
}

func (o order) cmp(a, b Contender) int {
	if ka, kb := o.key(a), o.key(b); ka != kb {
		return cmp.Compare(ka, kb)
	}
	if wa, wb := a.Kind == KindWrite, b.Kind == KindWrite; wa != wb {
		if wa {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// Scanned is what a waiter needs from a listing: see Scan.
type Scanned struct {
	Ours    Contender // our contender
	First   Contender // the first in queue order: the holder, or one of them
	Blocker Contender // the nearest contender ahead of ours that blocks us
	Blocked bool      // false: nothing ahead of ours blocks us
	// Blockers counts the contenders ahead of ours that block us: with
	// one, Blocker's deletion unblocks us (see Queue.wait).
	Blockers int
}

// Scan finds in names what sorting them (Sort) and searching the result
// would: our contender (ok is false when name is not among the accepted
// contenders), the first one, and the nearest one ahead of ours for which
// blocks is true (nil blocks: any). It compares each contender once instead
// of sorting: a waiter woken in a queue of a thousand pays for parsing the
// names and no more.
func Scan(names []string, name string, blocks func(Contender) bool, accept ...string) (s Scanned, ok bool) {
	cs, o := parseAll(names, accept)
	i := slices.IndexFunc(cs, func(c Contender) bool { return c.Name == name })
	if i < 0 {
		return Scanned{}, false
	}
	s.Ours, s.First = cs[i], cs[i]
	for _, c := range cs {
		if o.cmp(c, s.First) < 0 {
			s.First = c
		}
		if o.cmp(c, s.Ours) >= 0 || (blocks != nil && !blocks(c)) {
			continue
		}
		s.Blockers++
		if !s.Blocked || o.cmp(c, s.Blocker) > 0 {
			s.Blocker, s.Blocked = c, true
		}
	}
	return s, true
}

// Foreign returns the first of names that belongs to another kind of
// primitive than one whose children are of the accept kinds: a contender
// of a known kind not in accept, or a semaphore's LocksChild or
// LeasesChild (then Kind is the name) unless accept holds it. Other names
// are nobody's that we know of and are ignored, as Scan ignores them.
func Foreign(names []string, accept []string) (Contender, bool) {
	for _, n := range names {
		c, ok := Parse(n)
		if !ok && (n == LocksChild || n == LeasesChild) {
			c, ok = Contender{Name: n, Kind: n}, true
		}
		if ok && !slices.Contains(accept, c.Kind) {
			return c, true
		}
	}
	return Contender{}, false
}

// NewProtectedPrefix returns a fresh "_c_<uuid>-" prefix.
func NewProtectedPrefix() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return protectedPrefix(b)
}

// protectedPrefix formats b as Curator does: "_c_", the UUID's five
// groups of hex digits, each followed by "-". Without fmt: one allocation
// (the string), where fmt.Sprintf made seven, on every acquisition.
func protectedPrefix(b [16]byte) string {
	const digits = "0123456789abcdef"
	var out [len(ProtectedPrefix) + 32 + 5]byte
	n := copy(out[:], ProtectedPrefix)
	for i, x := range b {
		out[n], out[n+1] = digits[x>>4], digits[x&0x0f]
		n += 2
		if i == 3 || i == 5 || i == 7 || i == 9 || i == 15 {
			out[n] = '-'
			n++
		}
	}
	return string(out[:n])
}

// WrongKind is the error of a path that holds c, a node of another kind
// of primitive than the one acquiring there.
func WrongKind(dir string, c Contender) *errs.WrongKindError {
	return &errs.WrongKindError{Path: dir, Node: c.Name, Found: KindOf(c)}
}

// KindOf returns the kind of primitive c is a node of: the one vocabulary
// of kinds (errs.Kind), where a node's own kind (KindLock, ...) is a wire
// name.
func KindOf(c Contender) errs.Kind {
	switch c.Kind {
	case KindRead:
		return errs.RWMutexRead
	case KindKazooRLock:
		return errs.KazooReadLock
	case KindWrite:
		return errs.RWMutexWrite
	case KindLease, LocksChild, LeasesChild:
		return errs.Semaphore
	case KindLatch:
		return errs.LeaderLatch
	case KindPermit:
		return errs.SemaphorePermit
	case KindSeqLock:
		return errs.MutexSeq
	}
	return errs.Mutex // lock- and Kazoo's __lock__
}

// PrimitivePath returns the path of the primitive a node belongs to: its
// parent, or for a lease of Curator's semaphore layout
// (<path>/leases/<lease>) its grandparent. The session names it in the
// log lines of an epoch's end (session.Config.PrimitivePath).
func PrimitivePath(node string) string {
	dir := pathpkg.Dir(node)
	if c, ok := Parse(pathpkg.Base(node)); ok && c.Kind == KindLease {
		return pathpkg.Dir(dir)
	}
	return dir
}
