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
// t, when the rival acquired (see PeerOverlap), or false; always false for
// a zklock hold. Only what happened once its acquisition began counts: a
// session lost and replaced before it began to wait is not the session its
// hold rests on.
func peerLost(r *Outcome, iv Interval, t int64) (string, bool) {
	if iv.Lib == "" {
		return "", false
	}
	from := waitBegan(iv)
	for _, f := range r.Faults {
		if f.Target == iv.Proc && (f.Kind == FaultPause || f.Kind == FaultPartition) && f.Start <= t && f.End >= iv.Start {
			return fmt.Sprintf("%s for %v, from %v before the rival acquired", f.Kind, dur(f.End-f.Start).Round(time.Millisecond),
				dur(t-f.Start).Round(time.Millisecond)), true
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
				return fmt.Sprintf("%s reported LOST %v before the rival acquired", iv.Lib, dur(t-e.T).Round(time.Millisecond)), true
			}
		case e.T <= t:
			suspended = 0 // reconnected with its session
		case suspended != 0 && e.Res == "LOST":
			return fmt.Sprintf("%s reported SUSPENDED %v before the rival acquired and LOST %v after it", iv.Lib,
				dur(t-suspended).Round(time.Millisecond), dur(e.T-t).Round(time.Millisecond)), true
		case suspended != 0:
			return "", false // reconnected with its session after t
		}
	}
	return "", false
}

// waitBegan is when iv's acquisition began: its wait, or its start when it
// did not wait.
func waitBegan(iv Interval) int64 {
	if iv.Wait == 0 {
		return iv.Start
	}
	return iv.Wait
}

// peerLeaseAfterLost returns why iv, a peer library's semaphore lease, was
// returned with no session behind it: the library reported LOST after iv's
// wait began and before the lease was returned (Curator's semaphore hands
// back a lease whose node died with the session it was asked for in). Only
// that LOST counts: a lease returned while partitioned, or while SUSPENDED
// with the LOST after it, may rest on a live node, and then the excess lease
// is a rival's.
func peerLeaseAfterLost(r *Outcome, iv Interval) (string, bool) {
	if iv.Lib == "" {
		return "", false
	}
	for _, e := range r.Conns[iv.Proc] {
		if e.Res == "LOST" && e.T >= waitBegan(iv) && e.T <= iv.Start {
			return fmt.Sprintf("%s reported LOST %v before its lease was returned", iv.Lib, dur(iv.Start-e.T).Round(time.Millisecond)), true
		}
	}
	return "", false
}

// peerOverlap records a and rival as the peer library's when a is a peer
// hold whose session was lost before rival acquired, and reports whether it
// did.
func peerOverlap(r *Outcome, a, rival Interval, committed map[writeKey]Receipt, rep *Report) bool {
	why, ok := peerLost(r, a, rival.Start)
	if ok {
		recordPeerOverlap(r, a, rival, why, committed, rep)
	}
	return ok
}

// recordPeerOverlap adds a, a peer's hold, beside rival to the peer
// library's overlaps (once per hold), with its writes after rival acquired.
func recordPeerOverlap(r *Outcome, a, rival Interval, why string, committed map[writeKey]Receipt, rep *Report) {
	for i := range rep.PeerOverlaps {
		if rep.PeerOverlaps[i].Peer == a {
			return
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
