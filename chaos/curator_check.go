package chaos

import (
	"fmt"
	"time"
)

// CuratorOverlap is a believed overlap laid at Curator's door: a Curator
// holder whose session was lost (its process frozen past the session
// timeout, or Curator's connection SUSPENDED before the rival acquired and
// LOST after) went on believing it held while a rival acquired. Curator's
// locks do not tell their holder that its session is gone, and its writes
// carry no token a resource could refuse: this is what a plain Curator user
// gets, reported apart, not a violation of zklock's.
type CuratorOverlap struct {
	Prim              string
	Curator, Rival    Interval
	Evidence          string // what shows the session was lost before Rival acquired
	Writes, Committed int    // the Curator holder's writes sent after Rival acquired, and how many committed
}

// curatorProcs returns the incarnations that are Curator workers.
func curatorProcs(r *Outcome) map[string]bool {
	m := map[string]bool{}
	for _, e := range r.Events {
		if e.Lib == LibCurator {
			m[e.Proc] = true
		}
	}
	return m
}

// curatorLost returns why iv, a Curator hold, had lost its session by t
// (see CuratorOverlap), or false.
func curatorLost(r *Outcome, iv Interval, t int64) (string, bool) {
	if iv.Lib != LibCurator {
		return "", false
	}
	for _, f := range r.Faults {
		if f.Target == iv.Proc && (f.Kind == FaultPause || f.Kind == FaultPartition) && f.Start <= t && f.End >= iv.Start {
			return fmt.Sprintf("%s for %v from %v before the rival acquired", f.Kind, dur(f.End-f.Start).Round(time.Millisecond),
				dur(t-f.Start).Round(time.Millisecond)), true
		}
	}
	var suspended int64
	for _, e := range r.Conns[iv.Proc] {
		switch {
		case e.T <= t && (e.Res == "SUSPENDED" || e.Res == "LOST"):
			if suspended == 0 {
				suspended = e.T
			}
			if e.Res == "LOST" {
				return fmt.Sprintf("Curator reported LOST %v before the rival acquired", dur(t-e.T).Round(time.Millisecond)), true
			}
		case e.T <= t:
			suspended = 0 // reconnected with its session
		case suspended != 0 && e.Res == "LOST":
			return fmt.Sprintf("Curator reported SUSPENDED %v before the rival acquired and LOST %v after it",
				dur(t-suspended).Round(time.Millisecond), dur(e.T-t).Round(time.Millisecond)), true
		case suspended != 0:
			return "", false // reconnected with its session after t
		}
	}
	return "", false
}

// curatorOverlap records a and rival as Curator's when a is a Curator hold
// whose session was lost before rival acquired, and reports whether it did.
func curatorOverlap(r *Outcome, a, rival Interval, committed map[writeKey]Receipt, rep *Report) bool {
	why, ok := curatorLost(r, a, rival.Start)
	if !ok {
		return false
	}
	for i := range rep.CuratorOverlaps {
		if rep.CuratorOverlaps[i].Curator == a {
			return true
		}
	}
	co := CuratorOverlap{Prim: a.Prim, Curator: a, Rival: rival, Evidence: why}
	for _, e := range r.Events {
		if e.Ev == EvWrite && e.Proc == a.Proc && e.Prim == a.Prim && e.T >= rival.Start && e.T <= a.End && e.Res != ResSkipped {
			co.Writes++
			if _, ok := committed[writeKey{e.Proc, e.W}]; ok {
				co.Committed++
			}
		}
	}
	rep.CuratorOverlaps = append(rep.CuratorOverlaps, co)
	return true
}

// indexConns sorts the Curator workers' connection events by process.
func indexConns(r *Outcome) {
	r.Conns = map[string][]Event{}
	for _, e := range r.Events {
		if e.Ev == EvConn {
			r.Conns[e.Proc] = append(r.Conns[e.Proc], e)
		}
	}
}
