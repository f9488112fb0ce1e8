package chaos

import (
	"maps"
	"slices"
	"time"
)

// checkDeadlines holds zklock's claim to the letter. Session.OwnershipDeadline
// is the instant before which the server cannot have expired the session,
// so no rival can be granted a hold that conflicts with one of the
// session's before the deadline its holder logged (Event.Dl), frozen or
// not. For each zklock hold a of an exclusive primitive, a conflicting hold
// b granted after a and before a's latest logged deadline is a violation
// when a still believed at b's grant, or a's belief ended otherwise than by
// its release (its loss signal, a kill, a missing release): a's node then
// stays until its session expires, or until zklock deletes it once the
// epoch is over, both after the deadline. A hold ended by its release is
// let off: its node may have gone with the release, though a release sent
// while cut off never arrives, and one whose reply was lost cannot be told
// from it on the client's side; holders ride out a cut-off until their
// loss signal instead (workload.work), and then the rule applies. A stale grant is held to the
// same: a zklock hold b granted after a with an older token rests on a node
// older than a's, so a's grant shows b's node gone, and b's logged deadline
// must not be after a's grant.
//
// Curator's and Kazoo's holders have no deadline to log: their libraries
// make no such promise (their holders are not told of a lost session at
// all), so they are judged by their nodes instead (see peerGone).
func checkDeadlines(r *Outcome, ivs []Interval, rep *Report) {
	for _, list := range exclusiveLists(ivs) {
		for i, a := range list {
			for _, b := range list[i+1:] {
				if b.Start >= max(a.Dl, a.End) {
					break // sorted by start
				}
				if !exclusive(a, b) {
					continue
				}
				if a.Lib == "" && a.Dl > b.Start && (b.Start < a.End || !freed(a)) && !staleBefore(b, a) {
					deadlineViolation(rep, b, a)
				}
				if b.Start < a.End && a.Lib == "" && b.Lib == "" && !sameHolder(a, b) && b.Tok < a.Tok {
					deadlineBroken(b, a, rep)
				}
			}
		}
	}
}

// staleBefore reports whether b, a zklock grant, holds a node older than
// a's (a lower token): b is then no rival of a but a grant that came late
// (its holder frozen), whose node was gone when a was granted; the overlap
// rules judge it (a stale grant must see its loss), and deadlineBroken
// whether the deadline b logged was wrong.
func staleBefore(b, a Interval) bool {
	return b.Lib == "" && a.Lib == "" && b.Tok != 0 && b.Tok < a.Tok
}

// freed reports whether a ended by its release, which may have deleted its
// node.
func freed(a Interval) bool { return a.Why == WhyReleased }

// exclusiveLists returns the holds of each exclusive primitive, sorted by
// start, in a fixed order of primitives.
func exclusiveLists(ivs []Interval) [][]Interval {
	byPrim := map[string][]Interval{}
	for _, iv := range ivs {
		if !counting(iv.Prim) {
			byPrim[iv.Prim] = append(byPrim[iv.Prim], iv)
		}
	}
	var out [][]Interval
	for _, prim := range slices.Sorted(maps.Keys(byPrim)) {
		out = append(out, byPrim[prim])
	}
	return out
}

// deadlineBroken reports held, a zklock hold excused beside rival (frozen,
// or a stale grant), if its holder had logged a deadline after rival's grant.
func deadlineBroken(held, rival Interval, rep *Report) {
	if held.Lib == "" && held.Dl > rival.Start {
		deadlineViolation(rep, rival, held)
	}
}

func deadlineViolation(rep *Report, rival, held Interval) {
	rep.violate("%s: %s acquired %v before the ownership deadline %s had logged (%v into the run): the server cannot have expired its session yet",
		rival.Prim, describe(rival), msDur(held.Dl-rival.Start), describe(held), rep.at(held.Dl))
}

// deadlineLeads measures how far each logged deadline ran ahead of the
// rival: for every zklock hold of an exclusive primitive with a logged
// deadline that did not end by its release (its loss signal, or a kill),
// the time from that deadline to the next conflicting acquisition. It covers frozen and killed holders, which the
// loss lead leaves out; a negative lead is a violation (checkDeadlines).
func deadlineLeads(ivs []Interval, rep *Report) {
	for _, list := range exclusiveLists(ivs) {
		for i, a := range list {
			if a.Lib != "" || a.Dl == 0 || freed(a) {
				continue
			}
			for _, b := range list[i+1:] {
				if exclusive(a, b) && !staleBefore(b, a) {
					rep.DeadlineLeads = append(rep.DeadlineLeads, time.Duration(b.Start-a.Dl))
					break
				}
			}
		}
	}
}
