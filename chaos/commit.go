package chaos

import (
	"cmp"
	"maps"
	"slices"
)

// commitOrder bounds when each committed write committed, from the order in
// which the servers committed them rather than from when they were sent: a
// write that commits after another committed after that one was sent. A
// reply lost to a fault (an "unknown" write) or a write held up in a
// re-election can commit long after it was sent, so send time alone cannot
// tell whether a write got in before or after a rival's grant.
//
// The order is the receipts' czxid, one order across every primitive, so
// that the steady stream of writes on the other primitives dates each
// write; a saved outcome without czxids (before issue 33) falls back to
// each primitive's receipt sequence, which orders writes of one primitive
// only.
type commitOrder struct {
	low map[writeKey]int64 // the write committed after this time
}

func newCommitOrder(r *Outcome, committed map[writeKey]Receipt) *commitOrder {
	sent := map[writeKey]int64{}
	for _, e := range r.Events {
		if e.Ev == EvWrite {
			sent[writeKey{e.Proc, e.W}] = e.T
		}
	}
	var lists [][]Receipt
	all := slices.Collect(maps.Values(committed))
	if slices.ContainsFunc(all, func(rc Receipt) bool { return rc.Zxid == 0 }) {
		for _, rs := range r.Receipts {
			lists = append(lists, rs) // sorted by Seq (checkWrites)
		}
	} else {
		slices.SortFunc(all, func(a, b Receipt) int { return cmp.Compare(a.Zxid, b.Zxid) })
		lists = append(lists, all)
	}
	o := &commitOrder{low: map[writeKey]int64{}}
	for _, list := range lists {
		var before int64 // latest send time among the writes committed so far
		for _, rc := range list {
			k := writeKey{rc.Proc, rc.W}
			t, ok := sent[k]
			o.low[k] = max(before, t)
			if ok {
				before = max(before, t)
			}
		}
	}
	return o
}

// after reports whether committed write k is shown to have committed after
// t: it was sent after t, or committed after a write sent after t.
func (o *commitOrder) after(k writeKey, t int64) bool {
	low, ok := o.low[k]
	return ok && low >= t
}
