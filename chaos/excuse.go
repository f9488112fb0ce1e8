package chaos

import (
	"fmt"
	"time"
)

// Bounds of the frozen-holder excuse. A process frozen with SIGSTOP cannot
// see its loss signal, so a zklock holder frozen past its session's expiry
// believes beside the rival granted meanwhile, and only fencing protects
// the data. That excuses the overlap only within what a freeze can
// explain:
//
//   - The rival comes no sooner than RivalAfterFreeze after the freeze
//     began. The server expires a session no sooner than its timeout after
//     the last packet it received, and the holder's client sent one at most
//     a ping interval (a third of the timeout: the client pings after that
//     long without sending anything) before it was frozen. 2s sessions give
//     1.333s; the runs before issue 33 recorded 2.01s at the least, over 359
//     frozen overlaps.
//   - The holder stops believing within MaxBeliefAfterResume of being
//     resumed: its deadline passed during the freeze, so the watchdog fires
//     as soon as the process runs. Those runs recorded 9.5ms at the most;
//     500ms is 50 times that, for a two-core machine running the servers,
//     three JVMs and the race detector, and half the lateness of the
//     "latelost" broken mode, which must not pass.
//
// The ownership deadline bounds the rival as well, and more sharply (see
// checkDeadlines); these bounds also hold the holders that logged no
// deadline, and Curator's and Kazoo's are judged by their nodes instead.
const MaxBeliefAfterResume = 500 * time.Millisecond

// RivalAfterFreeze is the soonest a rival can be granted after a holder's
// process was frozen, for sessions of timeout: timeout less a ping
// interval (timeout/3).
func RivalAfterFreeze(timeout time.Duration) time.Duration { return timeout - timeout/3 }

// freezeDuring returns the last freeze of iv's process that began by t and
// ended after iv began: iv's holder was frozen while it believed.
func freezeDuring(r *Outcome, iv Interval, t int64) (Fault, bool) {
	var last Fault
	for _, f := range r.Faults {
		if f.Kind == FaultPause && f.Target == iv.Proc && iv.Start < f.End && f.Start <= t && f.Start >= last.Start {
			last = f
		}
	}
	return last, last.Kind != ""
}

// acquiringFreeze returns the last freeze of iv's process that began while
// it acquired iv: its grant may have gone stale during the freeze.
func acquiringFreeze(r *Outcome, iv Interval) (Fault, bool) {
	var last Fault
	for _, f := range r.Faults {
		if f.Kind == FaultPause && f.Target == iv.Proc && iv.Wait < f.Start && f.Start <= iv.Start && f.Start >= last.Start {
			last = f
		}
	}
	return last, last.Kind != ""
}

// frozenExcuse reports whether a zklock holder a may have believed beside
// rival because its process was frozen: frozen during a before rival
// acquired, within both bounds above. When a was frozen but a bound
// fails, why says which.
func frozenExcuse(r *Outcome, a, rival Interval) (ok bool, why string) {
	if a.Lib != "" {
		return false, "" // a peer's overlap is judged by its node (peerGone)
	}
	f, frozen := freezeDuring(r, a, rival.Start)
	if !frozen {
		return false, ""
	}
	return freezeBounds(r, f, a, rival)
}

// freezeBounds checks the bounds of a freeze f that excuses held's belief
// beside rival.
func freezeBounds(r *Outcome, f Fault, held, rival Interval) (bool, string) {
	if bound := RivalAfterFreeze(r.SessionTimeout); dur(rival.Start-f.Start) < bound {
		return false, fmt.Sprintf("%s was granted %v into %s's freeze, sooner than a session can expire (bound %v)",
			rival.Proc, msDur(rival.Start-f.Start), held.Proc, bound)
	}
	if d := dur(held.End - f.End); d > MaxBeliefAfterResume {
		return false, fmt.Sprintf("%s believed it held %v after it was resumed (bound %v)", held.Proc, d.Round(time.Millisecond), MaxBeliefAfterResume)
	}
	return true, ""
}

// staleExcuse reports whether b, granted after a but with an older token,
// is a grant that went stale while b's process was frozen acquiring it: its
// node was created before a's, so it can only be returned after a's grant
// if it vanished with b's session during the freeze, after the acquisition
// had checked it. Campaign and Lock then hand back a hold whose loss signal
// fires at once (seed 20261122: 258µs later). The loss signal must fire
// (within MaxBeliefAfterResume of the resume), and a must come no sooner
// than a session can expire.
func staleExcuse(r *Outcome, b, a Interval) (ok bool, why string) {
	if b.Lib != "" || a.Lib != "" || b.Tok >= a.Tok {
		return false, ""
	}
	f, frozen := acquiringFreeze(r, b)
	if !frozen {
		return false, ""
	}
	if b.Why != WhyLost {
		return false, fmt.Sprintf("%s's grant came %v after its freeze ended, older than %s's, but its loss signal never fired (%s)",
			b.Proc, msDur(b.Start-f.End), a.Proc, b.Why)
	}
	return freezeBounds(r, f, b, a)
}

// frozenFigures gives the figures behind the bounds: over the paused
// overlaps, the soonest a rival came after its freeze began and the
// longest a holder believed after its resume.
func frozenFigures(r *Outcome, rep *Report) {
	for _, po := range rep.PausedOverlaps {
		f, ok := freezeDuring(r, po.Paused, po.Rival.Start)
		if !ok {
			if f, ok = acquiringFreeze(r, po.Paused); !ok {
				continue
			}
		}
		rival, belief := dur(po.Rival.Start-f.Start), dur(po.Paused.End-f.End)
		if rep.Frozen == 0 || rival < rep.FrozenRivalMin {
			rep.FrozenRivalMin = rival
		}
		rep.FrozenBeliefMax = max(rep.FrozenBeliefMax, belief)
		rep.Frozen++
	}
}

// msDur is a difference of Now readings rounded to the millisecond.
func msDur(ns int64) time.Duration { return dur(ns).Round(time.Millisecond) }
