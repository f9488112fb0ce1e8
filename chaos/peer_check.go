package chaos

import (
	"fmt"
	"time"
)

// PeerOverlap is a believed overlap laid at a peer library's door: a
// Curator or Kazoo holder whose session was lost (its process frozen or cut
// off past the session timeout, or its connection SUSPENDED before the
// rival acquired and LOST after) went on believing it held while a rival
// acquired. Neither library's locks tell their holder that its session is
// gone, and their writes carry no token a resource could refuse: this is
// what a plain Curator or Kazoo user gets, reported apart, not a violation
// of zklock's.
type PeerOverlap struct {
	Prim              string
	Peer, Rival       Interval
	Evidence          string // what shows the session was lost before Rival acquired
	Writes, Committed int    // the peer holder's writes sent after Rival acquired, and how many committed
}

// peerProcs returns the incarnations that are Curator or Kazoo workers.
func peerProcs(r *Outcome) map[string]bool {
	m := map[string]bool{}
	for _, e := range r.Events {
		if e.Lib != "" {
			m[e.Proc] = true
		}
	}
	return m
}

// peerLost returns why iv, a peer library's hold, had lost its session by
// t (see PeerOverlap), or false; always false for a zklock hold. Only what
// happened once its acquisition began counts: a session lost and replaced
// before it began to wait is not the session its hold rests on. at names t
// in the evidence ("the rival acquired").
func peerLost(r *Outcome, iv Interval, t int64, at string) (string, bool) {
	if iv.Lib == "" {
		return "", false
	}
	from := iv.Wait
	if from == 0 {
		from = iv.Start
	}
	for _, f := range r.Faults {
		if f.Target == iv.Proc && (f.Kind == FaultPause || f.Kind == FaultPartition) && f.Start <= t && f.End >= iv.Start {
			return fmt.Sprintf("%s for %v, from %v before %s", f.Kind, dur(f.End-f.Start).Round(time.Millisecond),
				dur(t-f.Start).Round(time.Millisecond), at), true
		}
	}
	var suspended int64
	for _, e := range r.Conns[iv.Proc] {
		if e.T < from {
			continue
		}
		switch {
		case e.T <= t && (e.Res == "SUSPENDED" || e.Res == "LOST"):
			if suspended == 0 {
				suspended = e.T
			}
			if e.Res == "LOST" {
				return fmt.Sprintf("%s reported LOST %v before %s", iv.Lib, dur(t-e.T).Round(time.Millisecond), at), true
			}
		case e.T <= t:
			suspended = 0 // reconnected with its session
		case suspended != 0 && e.Res == "LOST":
			return fmt.Sprintf("%s reported SUSPENDED %v before %s and LOST %v after it", iv.Lib,
				dur(t-suspended).Round(time.Millisecond), at, dur(e.T-t).Round(time.Millisecond)), true
		case suspended != 0:
			return "", false // reconnected with its session after t
		}
	}
	return "", false
}

// peerOverlap records a and rival as the peer library's when a is a peer
// hold whose session was lost before rival acquired, and reports whether it
// did.
func peerOverlap(r *Outcome, a, rival Interval, committed map[writeKey]Receipt, rep *Report) bool {
	return peerOverlapAt(r, a, rival, rival.Start, "the rival acquired", committed, rep)
}

// peerOverlapAt is peerOverlap with a's session judged at t, named by at:
// rival.Start, or a's own acquisition when a is the later of the two.
func peerOverlapAt(r *Outcome, a, rival Interval, t int64, at string, committed map[writeKey]Receipt, rep *Report) bool {
	why, ok := peerLost(r, a, t, at)
	if !ok {
		return false
	}
	for i := range rep.PeerOverlaps {
		if rep.PeerOverlaps[i].Peer == a {
			return true
		}
	}
	po := PeerOverlap{Prim: a.Prim, Peer: a, Rival: rival, Evidence: why}
	for _, e := range r.Events {
		if e.Ev == EvWrite && e.Proc == a.Proc && e.Prim == a.Prim && e.T >= rival.Start && e.T <= a.End && e.Res != ResSkipped {
			po.Writes++
			if _, ok := committed[writeKey{e.Proc, e.W}]; ok {
				po.Committed++
			}
		}
	}
	rep.PeerOverlaps = append(rep.PeerOverlaps, po)
	return true
}

// indexConns sorts the peer workers' connection events by process.
func indexConns(r *Outcome) {
	r.Conns = map[string][]Event{}
	for _, e := range r.Events {
		if e.Ev == EvConn {
			r.Conns[e.Proc] = append(r.Conns[e.Proc], e)
		}
	}
}
