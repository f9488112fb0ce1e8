package chaos

import (
	"maps"
	"slices"
)

// peerWrites returns the writes whose damage to a counter is a peer
// library's, not zklock's: every write of a peer hold that went on
// believing after its node was gone (rep.PeerOverlaps), and the peer writes
// that committed after a later hold began (late, from checkLateCommits).
// Peer writes carry no token, so nothing refuses them.
func peerWrites(r *Outcome, rep *Report, late map[writeKey]bool) map[writeKey]bool {
	out := map[writeKey]bool{}
	maps.Copy(out, late)
	for _, e := range r.Events {
		if e.Ev != EvWrite || e.Lib == "" {
			continue
		}
		if slices.ContainsFunc(rep.PeerOverlaps, func(po PeerOverlap) bool {
			return po.Peer.Proc == e.Proc && po.Peer.Prim == e.Prim && e.T >= po.Peer.Start && e.T <= po.Peer.End
		}) {
			out[writeKey{e.Proc, e.W}] = true
		}
	}
	return out
}

// checkCounters walks each primitive's increments (checkValues) and checks
// its final counter against the increments committed, less those lost to
// peer writes.
func checkCounters(r *Outcome, peer map[writeKey]bool, rep *Report) {
	for _, prim := range slices.Sorted(maps.Keys(r.Receipts)) {
		checkValues(prim, r.Receipts[prim], peer, rep)
	}
	for _, prim := range Primitives {
		if n := int64(len(r.Receipts[prim]) - rep.PeerLost[prim]); r.Counters[prim] != n {
			rep.violate("%s: final counter %d but %d increments committed (lost or duplicated increment; %d lost to Curator's or Kazoo's holders apart)",
				prim, r.Counters[prim], n, rep.PeerLost[prim])
		}
	}
}

// checkValues walks prim's committed increments in commit order: each
// writes the value before it plus one. One that writes less read the counter
// before another holder's write committed, so increments were lost (two
// holders at once, or a write that got past fencing). The loss is a peer
// library's (counted in rep.PeerLost, not a violation) only when one of
// the two writes is a peer write in peer: an unfenced write of a peer
// holder that had lost its node, or that committed after a later hold
// began. A zklock write that lands after a legitimate peer holder's is a
// violation. Walking rather than looking for values written twice
// attributes a peer's stale write that sets the counter back by several
// increments to the peer alone, not to the zklock holders that count again
// over the values it undid.
func checkValues(prim string, rs []Receipt, peer map[writeKey]bool, rep *Report) {
	dups, cur := 0, int64(0) // the counter is created as 0
	for i, rc := range rs {
		lost := cur + 1 - rc.V
		prev := cur
		cur = rc.V
		switch {
		case lost == 0:
			continue
		case lost < 0:
			rep.violate("%s: value %d written by %s after the counter reached %d: a committed write without a receipt", prim, rc.V, rc.Proc, prev)
			continue
		}
		if peer[writeKey{rc.Proc, rc.W}] || (i > 0 && peer[writeKey{rs[i-1].Proc, rs[i-1].W}]) {
			rep.PeerLost[prim] += int(lost)
			continue
		}
		if dups++; dups <= 5 {
			rep.violate("%s: value %d written by %s token %d after the counter reached %d (by %s token %d): %d increment(s) lost",
				prim, rc.V, rc.Proc, rc.Tok, prev, rs[i-1].Proc, rs[i-1].Tok, lost)
		}
	}
	if dups > 5 {
		rep.violate("%s: %d more increments that overwrote others", prim, dups-5)
	}
}
