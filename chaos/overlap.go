package chaos

import (
	"maps"
	"slices"
	"strings"
)

// PausedOverlap is a believed overlap excused because a holder was frozen
// (SIGSTOP) while it held: it could not see its loss signal until resumed,
// and only fencing keeps its writes out.
type PausedOverlap struct {
	Prim          string
	Paused, Rival Interval // Rival: the first holder that overlapped
	Rivals        int      // holders that overlapped
	Writes        int      // writes of the paused holder sent or committed after Rival acquired
	Committed     int      // of those, how many committed after Rival acquired, by commit order (must be 0)
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
func checkOverlaps(r *Outcome, ivs []Interval, ord *commitOrder, rep *Report) {
	byPrim := map[string][]Interval{}
	for _, iv := range ivs {
		byPrim[iv.Prim] = append(byPrim[iv.Prim], iv)
	}
	for _, prim := range slices.Sorted(maps.Keys(byPrim)) {
		list := byPrim[prim]
		if counting(prim) {
			checkCount(r, list, ord, rep)
			continue
		}
		for i, a := range list {
			for _, b := range list[i+1:] {
				if b.Start >= a.End {
					break // sorted by start: no later one overlaps a
				}
				if !sameHolder(a, b) && exclusive(a, b) {
					overlap(r, a, b, ord, rep)
				}
			}
		}
	}
}

// overlap reports a and b (a started first) as a violation unless a is a
// peer's hold whose node was gone before b acquired (Curator's or Kazoo's,
// reported apart), a was frozen before b acquired (frozenExcuse), or b is a
// grant that went stale while its process was frozen acquiring it
// (staleExcuse); the last two are paused overlaps, whose late writes
// fencing must refuse. A failed excuse is named in the violation.
func overlap(r *Outcome, a, b Interval, ord *commitOrder, rep *Report) {
	if peerOverlap(r, a, b, ord, rep) {
		return
	}
	okA, whyA := frozenExcuse(r, a, b)
	if okA {
		fenced(r, a, b, ord, rep)
		return
	}
	okB, whyB := staleExcuse(r, b, a)
	if okB {
		fenced(r, b, a, ord, rep)
		return
	}
	var whys []string
	for _, w := range []string{whyA, whyB, peerNodeWhy(r, a, b.Start)} {
		if w != "" {
			whys = append(whys, w)
		}
	}
	note := ""
	if len(whys) > 0 {
		note = " (not excused: " + strings.Join(whys, "; ") + ")"
	}
	rep.violate("%s: %s and %s believed they held together for %v%s", a.Prim, describe(a), describe(b),
		dur(min(a.End, b.End)-b.Start), note)
}

// pausedBefore reports whether iv's process was frozen during iv, the
// freeze beginning before t (whatever its bounds: see frozenExcuse).
func pausedBefore(r *Outcome, iv Interval, t int64) bool {
	_, ok := freezeDuring(r, iv, t)
	return ok
}

// fenced records a paused overlap and checks that no write of the paused
// holder committed after the rival acquired, by commit order (commitOrder):
// a write sent before the freeze can commit after it. Later rivals of the
// same paused hold only count.
func fenced(r *Outcome, paused, rival Interval, ord *commitOrder, rep *Report) {
	for i := range rep.PausedOverlaps {
		if po := &rep.PausedOverlaps[i]; po.Paused == paused {
			po.Rivals++
			return
		}
	}
	po := PausedOverlap{Prim: paused.Prim, Paused: paused, Rival: rival, Rivals: 1}
	for _, e := range r.Events {
		if e.Ev != EvWrite || e.Proc != paused.Proc || e.Prim != paused.Prim || e.G != paused.G || e.Tok != paused.Tok ||
			e.Res == ResSkipped {
			continue
		}
		late := ord.after(writeKey{e.Proc, e.W}, rival.Start)
		if e.T >= rival.Start || late {
			po.Writes++
		}
		if late {
			po.Committed++
		}
	}
	if po.Committed > 0 {
		rep.violate("%s: fencing failed: %d write(s) of paused %s committed after %s acquired (by commit order)",
			paused.Prim, po.Committed, describe(paused), describe(rival))
	}
	rep.PausedOverlaps = append(rep.PausedOverlaps, po)
}
