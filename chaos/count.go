package chaos

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// checkCount checks that the semaphore holders who believed they held at
// once held at most the primitive's limit of leases (limitOf). When a
// holder acquires, those still believing exceed the limit only by holds
// the same excuses as the exclusive primitives' explain, each with the
// same bounds: a zklock lease frozen before the acquisition
// (frozenExcuse), a lease that went stale while its process was frozen
// acquiring it (staleAmong, staleLease), a peer's lease whose node was
// gone (peerGone), or a peer's lease returned with its node already gone
// (peerLeaseNoNode). Frozen and stale leases are recorded as paused
// overlaps and checked for fencing; they, and the peers', are not counted
// against later holders. An excused lease that the acquisition needs
// excused (the count with it exceeds the limit) whose holder had logged an
// ownership deadline after the acquisition is a violation all the same.
func checkCount(r *Outcome, list []Interval, ord *commitOrder, rep *Report) {
	stale := make([]bool, len(list))
	for i, b := range list {
		limit := limitOf(b.Prim, r.Limit)
		active, paused, gone, whys := believers(r, list[:i], stale, b, rep)
		if n := leases(active) + b.N; n > limit {
			if rival, ok := staleAmong(r, b, active); ok {
				stale[i] = true
				deadlineBroken(b, rival, rep)
				fenced(r, b, rival, ord, rep)
				continue
			}
			if why, ok := peerLeaseNoNode(r, b); ok && len(active) > 0 {
				// The peer's, not zklock's; later holders count it as gone.
				recordPeerOverlap(r, b, active[len(active)-1], why, ord, rep)
				continue
			}
			note := ""
			if len(whys) > 0 {
				note = " (not excused: " + strings.Join(whys, "; ") + ")"
			}
			rep.violate("%s: %d leases believed held at once by %d holders (limit %d) when %s acquired at %v, beside %s%s",
				b.Prim, n, len(active)+1, limit, describe(b), rep.at(b.Start), describeHolds(rep, active), note)
		} else if staleLease(r, b, list[:i]) {
			stale[i] = true // counted against whoever acquires while it still believes
		}
		leftBeforeDeadline(rep, list[:i], b, leases(active), limit)
		if leases(active)+leases(paused)+leases(gone)+b.N > limit {
			// The excess is the excused leases': their holders' deadlines
			// must have passed.
			for _, a := range paused {
				deadlineBroken(a, b, rep)
				fenced(r, a, b, ord, rep)
			}
			for _, a := range gone {
				peerOverlap(r, a, b, ord, rep)
			}
		}
	}
}

// believers sorts the earlier holds that still believed when b acquired:
// those a peer's node gone excuses, those paused (frozen within the bounds,
// or stale), and the rest, active, with why an excuse failed.
func believers(r *Outcome, earlier []Interval, stale []bool, b Interval, rep *Report) (active, paused, gone []Interval, whys []string) {
	for j, a := range earlier {
		if a.End <= b.Start {
			continue
		}
		if _, ok := peerGone(r, a, b.Start); ok {
			gone = append(gone, a)
			continue
		}
		ok, why := frozenExcuse(r, a, b)
		if stale[j] || ok {
			paused = append(paused, a)
			continue
		}
		if w := cmp.Or(why, peerNodeWhy(r, a, b.Start)); w != "" {
			whys = append(whys, w)
		}
		active = append(active, a)
	}
	return active, paused, gone, whys
}

// staleLease reports whether b is a lease handed back just after its
// process was resumed from a freeze that began while it acquired
// (acquiringFreeze), ending in a loss within MaxBeliefAfterResume of the
// resume, and older than a lease granted since it began to wait: its grant
// was decided before the freeze (seed 20261125: w3.4, frozen for 3.6s while
// it released the semaphore's mutex after its grant, returned a lease its
// session had lost; the loss fired 1.7ms later). It did not exceed the
// limit when it returned, as staleAmong's leases do, because the holders
// granted during the freeze had left; those who acquire while it still
// believes find it among the paused.
func staleLease(r *Outcome, b Interval, earlier []Interval) bool {
	f, ok := acquiringFreeze(r, b)
	if b.Lib != "" || b.Why != WhyLost || !ok || dur(b.End-f.End) > MaxBeliefAfterResume {
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
func describeHolds(rep *Report, ivs []Interval) string {
	s := make([]string, len(ivs))
	for i, iv := range ivs {
		s[i] = fmt.Sprintf("%s (%v to %v, %s)", describe(iv), rep.at(iv.Start), rep.at(iv.End), iv.Why)
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

// staleAmong returns the first of active against which b is a stale grant
// (staleExcuse).
func staleAmong(r *Outcome, b Interval, active []Interval) (Interval, bool) {
	for _, a := range active {
		if ok, _ := staleExcuse(r, b, a); ok {
			return a, true
		}
	}
	return Interval{}, false
}

// at is a Now reading as the time into the run, for messages.
func (r *Report) at(t int64) time.Duration { return msDur(t - r.start) }

// leftBeforeDeadline holds the semaphore to zklock's claim as checkDeadlines
// holds the exclusive primitives: a zklock lease whose belief ended
// otherwise than by its release (its loss signal, a kill) keeps its node
// until its session expires, which the server cannot do before the
// ownership deadline its holder logged. When b acquires before such
// deadlines and the count with those leases, beside the active ones,
// exceeds the limit, b was granted a lease that still stood: each such
// lease is reported.
func leftBeforeDeadline(rep *Report, earlier []Interval, b Interval, active, limit int) {
	var left []Interval
	for _, a := range earlier {
		if a.Lib == "" && a.End <= b.Start && !freed(a) && a.Dl > b.Start {
			left = append(left, a)
		}
	}
	if len(left) == 0 || active+leases(left)+b.N <= limit {
		return
	}
	for _, a := range left {
		deadlineViolation(rep, b, a)
	}
}
