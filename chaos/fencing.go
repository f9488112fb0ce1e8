package chaos

import (
	"cmp"
	"slices"
)

// checkLateCommits is the fencing check that does not care who holds: a
// write of an exclusive primitive that committed (by commit order) after a
// conflicting hold began, that hold having begun after the writer stopped
// believing, got past fencing. The later grant shows the writer's node
// gone (its release or its session's expiry came first), and its guard
// checks that node, so a zklock write cannot commit then, whoever the
// later holder is: zklock's, Curator's or Kazoo's, or the writer's own next
// hold. A write still in flight when its holder stopped believing (its
// reply lost to a fault, or held up in a re-election) is what this
// catches; a frozen holder, which believes past its rival's grant, is
// fenced's. Peer writes carry no guard: those are returned, the peer's.
func checkLateCommits(r *Outcome, ivs []Interval, committed map[writeKey]Receipt, ord *commitOrder, rep *Report) map[writeKey]bool {
	byHolder := map[holdKey][]Interval{}
	byPrim := map[string][]Interval{}
	for _, iv := range ivs {
		k := holdKey{iv.Proc, iv.Prim, iv.G}
		byHolder[k] = append(byHolder[k], iv)
		byPrim[iv.Prim] = append(byPrim[iv.Prim], iv)
	}
	peer := map[writeKey]bool{}
	for _, e := range r.Events {
		k := writeKey{e.Proc, e.W}
		if _, ok := committed[k]; e.Ev != EvWrite || !ok {
			continue
		}
		a, ok := holdOf(byHolder[holdKey{e.Proc, e.Prim, e.G}], e)
		if !ok {
			continue
		}
		next := nextConflicting
		if counting(a.Prim) {
			next = func(list []Interval, a Interval) (Interval, bool) {
				return nextNeeding(list, a, limitOf(a.Prim, r.Limit))
			}
		}
		b, ok := next(byPrim[a.Prim], a)
		if !ok || !ord.after(k, b.Start) {
			continue
		}
		if a.Lib != "" {
			peer[k] = true
			continue
		}
		rep.violate("%s: write %d by %s (token %d) committed after a later hold began: %s acquired %v after the writer stopped believing (%s at %v); its guard should have refused it",
			e.Prim, e.W, e.Proc, e.Tok, describe(b), msDur(b.Start-a.End), a.Why, rep.at(a.End))
	}
	return peer
}

// holdOf returns the hold, among one workload's (sorted by start), that
// write e was sent in: the last that began before e was sent, with e's
// token.
func holdOf(holds []Interval, e Event) (Interval, bool) {
	i, _ := slices.BinarySearchFunc(holds, e.T, func(iv Interval, t int64) int { return cmp.Compare(iv.Start, t+1) })
	if i == 0 || holds[i-1].Tok != e.Tok {
		return Interval{}, false
	}
	return holds[i-1], true
}

// nextConflicting returns the first hold of list (sorted by start) that
// began once a had ended and conflicts with it.
func nextConflicting(list []Interval, a Interval) (Interval, bool) {
	i, _ := slices.BinarySearchFunc(list, a.End, func(iv Interval, t int64) int { return cmp.Compare(iv.Start, t) })
	for _, b := range list[i:] {
		if exclusive(a, b) {
			return b, true
		}
	}
	return Interval{}, false
}

// nextNeeding returns the first hold of a semaphore's list (sorted by
// start) that began once lease a had ended and needed a's place: the
// leases that still stood when it was granted (zklock holds still
// believed whose logged ownership deadline had not passed: their nodes
// stood) with a's and its own exceed the limit, so a's node was gone.
func nextNeeding(list []Interval, a Interval, limit int) (Interval, bool) {
	i, _ := slices.BinarySearchFunc(list, a.End, func(iv Interval, t int64) int { return cmp.Compare(iv.Start, t) })
	for _, b := range list[i:] {
		standing := 0
		for _, c := range list {
			if c.Start > b.Start {
				break
			}
			if c != b && c.Lib == "" && c.End > b.Start && c.Dl > b.Start {
				standing += max(c.N, 1)
			}
		}
		if standing+max(a.N, 1)+max(b.N, 1) > limit {
			return b, true
		}
	}
	return Interval{}, false
}
