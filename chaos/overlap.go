package chaos

import (
	"fmt"
	"strings"
	"time"
)

// PausedOverlap is a believed overlap excused because a holder was frozen
// (SIGSTOP) while it held: it could not see its loss signal until resumed,
// and only fencing keeps its writes out.
type PausedOverlap struct {
	Prim          string
	Paused, Rival Interval // Rival: the first holder that overlapped
	Rivals        int      // holders that overlapped
	Writes        int      // writes the paused holder sent after Rival acquired
	Committed     int      // of those, how many the server accepted (must be 0)
}

// exclusive reports whether a and b may not hold together (the semaphore is
// checked by counting instead).
func exclusive(a, b Interval) bool {
	if a.Prim == "rwmutex" {
		return a.Mode == ModeExclusive || b.Mode == ModeExclusive
	}
	return true
}

// checkOverlaps finds holders that believed they held together when they
// must not have.
func checkOverlaps(r *Outcome, ivs []Interval, committed map[writeKey]Receipt, rep *Report) {
	byPrim := map[string][]Interval{}
	for _, iv := range ivs {
		byPrim[iv.Prim] = append(byPrim[iv.Prim], iv)
	}
	for prim, list := range byPrim {
		if counting(prim) {
			checkCount(r, list, committed, rep)
			continue
		}
		for i, a := range list {
			for _, b := range list[i+1:] {
				if b.Start >= a.End {
					break // sorted by start: no later one overlaps a
				}
				if !sameHolder(a, b) && exclusive(a, b) {
					overlap(r, a, b, committed, rep)
				}
			}
		}
	}
}

// overlap reports a and b (a started first) as a violation unless a was
// paused, having acquired, before b acquired, or b is a grant that went
// stale while its process was frozen in the middle of acquiring it.
func overlap(r *Outcome, a, b Interval, committed map[writeKey]Receipt, rep *Report) {
	switch {
	case peerOverlap(r, a, b, committed, rep):
	case pausedBefore(r, a, b.Start):
		fenced(r, a, b, committed, rep)
	case staleOnArrival(r, b, a):
		fenced(r, b, a, committed, rep)
	default:
		rep.violate("%s: %s and %s believed they held together for %v", a.Prim, describe(a), describe(b),
			dur(min(a.End, b.End)-b.Start))
	}
}

// staleOnArrival reports whether b, granted after a but with an older
// token, was acquired by a process frozen while it acquired: its node was
// created before a's, so it can only be returned after a's grant if it
// vanished with b's session during the freeze, after the acquisition had
// checked it. Campaign and Lock then hand back a hold whose loss signal
// fires at once (seed 20261122: 258µs later).
func staleOnArrival(r *Outcome, b, a Interval) bool {
	return b.Tok < a.Tok && stalePaused(r, b)
}

// pausedBefore reports whether iv's process was frozen during iv, the
// freeze beginning before t. A frozen process logs nothing, so a hold that
// began before the freeze ended began before it, even if it was logged a
// moment after the coordinator stamped the freeze's start.
func pausedBefore(r *Outcome, iv Interval, t int64) bool {
	for _, f := range r.Faults {
		if f.Kind == FaultPause && f.Target == iv.Proc && iv.Start < f.End && f.Start <= t {
			return true
		}
	}
	return false
}

// fenced records a paused overlap and checks that every write the paused
// holder sent after the rival acquired was refused.
// Later rivals of the same paused hold only count.
func fenced(r *Outcome, paused, rival Interval, committed map[writeKey]Receipt, rep *Report) {
	if peerOverlap(r, paused, rival, committed, rep) {
		return // Curator's and Kazoo's holders have no token to fence with
	}
	for i := range rep.PausedOverlaps {
		if po := &rep.PausedOverlaps[i]; po.Paused == paused {
			po.Rivals++
			return
		}
	}
	po := PausedOverlap{Prim: paused.Prim, Paused: paused, Rival: rival, Rivals: 1}
	for _, e := range r.Events {
		if e.Ev == EvWrite && e.Proc == paused.Proc && e.Prim == paused.Prim && e.Tok == paused.Tok &&
			e.T >= rival.Start && e.Res != ResSkipped {
			po.Writes++
			if _, ok := committed[writeKey{e.Proc, e.W}]; ok {
				po.Committed++
			}
		}
	}
	if po.Committed > 0 {
		rep.violate("%s: fencing failed: %d write(s) of paused %s committed after %s acquired",
			paused.Prim, po.Committed, describe(paused), describe(rival))
	}
	rep.PausedOverlaps = append(rep.PausedOverlaps, po)
}

// checkCount checks that the semaphore holders who believed they held at
// once held at most the primitive's limit of leases (limitOf): when a
// holder acquires, those still believing exceed the limit only if the
// excess was frozen while it held, or is a lease that went stale while its
// process was frozen acquiring it (see staleOnArrival). Either kind is
// recorded as a paused overlap, checked for fencing, and not counted
// against later holders.
func checkCount(r *Outcome, list []Interval, committed map[writeKey]Receipt, rep *Report) {
	stale := make([]bool, len(list))
	for i, b := range list {
		limit := limitOf(b.Prim, r.Limit)
		var active, paused, lost []Interval
		for j, a := range list[:i] {
			if a.End > b.Start {
				if _, ok := peerLost(r, a, b.Start); ok {
					lost = append(lost, a)
				} else if stale[j] || pausedBefore(r, a, b.Start) {
					paused = append(paused, a)
				} else {
					active = append(active, a)
				}
			}
		}
		if n := leases(active) + b.N; n > limit {
			if rival, ok := staleAmong(r, b, active); ok {
				stale[i] = true
				fenced(r, b, rival, committed, rep)
				continue
			}
			if why, ok := peerLeaseAfterLost(r, b); ok && len(active) > 0 {
				// The peer's, not zklock's; later holders count it as lost.
				recordPeerOverlap(r, b, active[len(active)-1], why, committed, rep)
				continue
			}
			rep.violate("%s: %d leases believed held at once by %d holders (limit %d) when %s acquired at %v, beside %s",
				b.Prim, n, len(active)+1, limit, describe(b), time.Duration(b.Start), describeHolds(active))
		} else if staleLease(r, b, list[:i]) {
			stale[i] = true // counted against whoever acquires while it still believes
		}
		if leases(active)+leases(paused)+leases(lost)+b.N > limit {
			for _, a := range paused {
				fenced(r, a, b, committed, rep)
			}
			for _, a := range lost {
				peerOverlap(r, a, b, committed, rep)
			}
		}
	}
}

// staleLease reports whether b is a lease handed back just after its
// process was resumed from a freeze that began while it acquired
// (stalePaused), ending in a loss, and older than a lease granted since it
// began to wait: its grant was decided before the freeze (seed 20261125:
// w3.4, frozen for 3.6s while it released the semaphore's mutex after its
// grant, returned a lease its session had lost; the loss fired 1.7ms later).
// It did not exceed the limit when it returned, as staleAmong's leases do,
// because the holders granted during the freeze had left; those who acquire
// while it still believes find it among the paused.
func staleLease(r *Outcome, b Interval, earlier []Interval) bool {
	if b.Why != WhyLost || !stalePaused(r, b) {
		return false
	}
	for _, c := range earlier {
		if c.Tok > b.Tok && c.Start > b.Wait {
			return true
		}
	}
	return false
}

// describeHolds names each of ivs with the span it believed it held.
func describeHolds(ivs []Interval) string {
	s := make([]string, len(ivs))
	for i, iv := range ivs {
		s[i] = fmt.Sprintf("%s (%v to %v, %s)", describe(iv), time.Duration(iv.Start), time.Duration(iv.End), iv.Why)
	}
	return strings.Join(s, ", ")
}

// leases sums the leases of semaphore holds.
func leases(ivs []Interval) int {
	n := 0
	for _, iv := range ivs {
		n += max(iv.N, 1)
	}
	return n
}

// staleAmong returns the first of active against which b is a stale grant.
func staleAmong(r *Outcome, b Interval, active []Interval) (Interval, bool) {
	for _, a := range active {
		if staleOnArrival(r, b, a) {
			return a, true
		}
	}
	return Interval{}, false
}
