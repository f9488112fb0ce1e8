package chaos

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// PeerOverlap is a believed overlap laid at a peer library's door: a
// Curator or Kazoo holder went on believing it held after its node was
// gone (its session expired: its process frozen or cut off, or its
// library's own handling of a lost session), while a rival acquired; or
// the library returned a lease whose node was already gone. Neither
// library's locks tell their holder that its session is gone, and their
// writes carry no token a resource could refuse: this is what a plain
// Curator or Kazoo user gets, reported apart, not a violation of zklock's.
// The ground truth is the node: the coordinator records when each peer
// hold's node was deleted (Outcome.Nodes), and only a node gone before the
// rival acquired excuses the overlap.
type PeerOverlap struct {
	Prim              string
	Peer, Rival       Interval
	Evidence          string // when the peer's node went, and what happened to its session
	Writes, Committed int    // the peer holder's writes sent or committed after Rival acquired, and how many committed after it
}

// PeerLag is how much later than a rival's grant the coordinator may see
// a peer's node deleted and still count it as gone before the grant. A
// zklock waiter whose only blocker is deleted is granted on the
// notification with no further request, so its grant and the watcher's
// stamp of that same notification race at the scale of goroutine
// scheduling. Over the handoffs from a Curator or Kazoo release to a
// zklock grant in three runs (a 3-minute one and two 45s ones, 1,447
// releases), the stamp came after the grant by 1.25ms at the most; the
// report gives this lag for every run (watcherLeads). 50ms is 40 times
// that, and far below what the excuse is about: a peer's node outlives its
// holder's lost session by the session timeout.
const PeerLag = 50 * time.Millisecond

// gonePast reports whether n was seen gone by t, within PeerLag.
func gonePast(n NodeLife, t int64) bool { return n.Gone != 0 && n.Gone <= t+int64(PeerLag) }

// goneBy describes when n went relative to t (when it was seen gone at most
// PeerLag after t).
func goneBy(n NodeLife, t int64, what string) string {
	if n.Gone <= t {
		return fmt.Sprintf("%v before %s", msDur(t-n.Gone), what)
	}
	return fmt.Sprintf("%v after %s, within the watcher's %v", dur(n.Gone-t).Round(time.Microsecond), what, PeerLag)
}

// peerGone returns why iv, a peer library's hold, no longer held at t,
// when the rival acquired: its node (Event.Node) was deleted by then
// (Outcome.Nodes, within PeerLag). Always false for a zklock hold, and for
// a peer hold whose node was not seen gone by then.
func peerGone(r *Outcome, iv Interval, t int64) (string, bool) {
	n, ok := r.Nodes[iv.Node]
	if iv.Lib == "" || iv.Node == "" || !ok || !gonePast(n, t) {
		return "", false
	}
	why := fmt.Sprintf("its node %s was seen deleted %s", path.Base(iv.Node), goneBy(n, t, "the rival acquired"))
	if s := peerStory(r, iv, t); s != "" {
		why += " (" + s + ")"
	}
	return why, true
}

// peerNodeWhy says why iv, a peer's hold, is not excused beside a rival
// granted at t ("" for a zklock hold).
func peerNodeWhy(r *Outcome, iv Interval, t int64) string {
	n, ok := r.Nodes[iv.Node]
	switch {
	case iv.Lib == "":
		return ""
	case iv.Node == "":
		return fmt.Sprintf("%s logged no node for its hold", iv.Proc)
	case !ok:
		return fmt.Sprintf("no record of %s's node %s", iv.Proc, path.Base(iv.Node))
	case n.Gone == 0:
		return fmt.Sprintf("%s's node %s was never seen gone", iv.Proc, path.Base(iv.Node))
	}
	return fmt.Sprintf("%s's node %s was deleted %v after the rival acquired (tolerance %v)", iv.Proc, path.Base(iv.Node), msDur(n.Gone-t), PeerLag)
}

// peerStory describes what happened to iv's session by t, for the
// evidence: a freeze or a partition of its process, or its library's
// connection states since its acquisition began ("" if nothing). It
// excuses nothing by itself: a session can look lost and be live.
func peerStory(r *Outcome, iv Interval, t int64) string {
	for _, f := range r.Faults {
		if f.Target == iv.Proc && (f.Kind == FaultPause || f.Kind == FaultPartition) && f.Start <= t && f.End >= iv.Start {
			return fmt.Sprintf("%s for %v, from %v before the rival acquired", f.Kind, msDur(f.End-f.Start), msDur(t-f.Start))
		}
	}
	var states []string
	for _, e := range r.Conns[iv.Proc] {
		if e.T >= waitBegan(iv) && e.T <= t && len(states) < 4 {
			states = append(states, fmt.Sprintf("%s %v before", e.Res, msDur(t-e.T)))
		}
	}
	if len(states) == 0 {
		return ""
	}
	return iv.Lib + " reported " + strings.Join(states, ", ")
}

// waitBegan is when iv's acquisition began: its wait, or its start when it
// did not wait.
func waitBegan(iv Interval) int64 {
	if iv.Wait == 0 {
		return iv.Start
	}
	return iv.Wait
}

// peerLeaseNoNode returns why iv, a peer library's semaphore lease, was
// returned with no node behind it: its node (Event.Node) had been deleted
// before the lease was returned (within PeerLag). Curator's semaphore
// hands back a lease whose node died with the session it was asked for in
// (soak at ea469e0, c1.20). A lease whose node was live when it was returned is real, and
// the excess is someone else's.
func peerLeaseNoNode(r *Outcome, iv Interval) (string, bool) {
	n, ok := r.Nodes[iv.Node]
	if iv.Lib == "" || iv.Node == "" || !ok || !gonePast(n, iv.Start) {
		return "", false
	}
	why := fmt.Sprintf("%s returned a lease whose node %s was seen deleted %s", iv.Lib, path.Base(iv.Node), goneBy(n, iv.Start, "it returned it"))
	if s := peerStory(r, iv, iv.Start); s != "" {
		why += " (" + s + ")"
	}
	return why, true
}

// peerOverlap records a and rival as the peer library's when a is a peer
// hold whose node was gone before rival acquired, and reports whether it
// did.
func peerOverlap(r *Outcome, a, rival Interval, ord *commitOrder, rep *Report) bool {
	why, ok := peerGone(r, a, rival.Start)
	if ok {
		recordPeerOverlap(r, a, rival, why, ord, rep)
		rep.PeerMargins = append(rep.PeerMargins, dur(rival.Start-r.Nodes[a.Node].Gone))
	}
	return ok
}

// recordPeerOverlap adds a, a peer's hold, beside rival to the peer
// library's overlaps (once per hold), with its writes after rival acquired.
func recordPeerOverlap(r *Outcome, a, rival Interval, why string, ord *commitOrder, rep *Report) {
	for i := range rep.PeerOverlaps {
		if rep.PeerOverlaps[i].Peer == a {
			return
		}
	}
	po := PeerOverlap{Prim: a.Prim, Peer: a, Rival: rival, Evidence: why}
	for _, e := range r.Events {
		if e.Ev != EvWrite || e.Proc != a.Proc || e.Prim != a.Prim || e.T < a.Start || e.T > a.End || e.Res == ResSkipped {
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
	rep.PeerOverlaps = append(rep.PeerOverlaps, po)
}

// watcherLeads measures the node watcher against the workers' clock: for
// each peer hold of an exclusive primitive that ended by its release, with
// its node seen gone, the time from that to the next conflicting zklock
// grant, which needed the node gone. A negative lead is the watcher's stamp
// coming after a grant it should precede, which PeerLag allows for.
func watcherLeads(r *Outcome, ivs []Interval, rep *Report) {
	for _, list := range exclusiveLists(ivs) {
		for i, a := range list {
			n, ok := r.Nodes[a.Node]
			if a.Lib == "" || a.Why != WhyReleased || !ok || n.Gone == 0 {
				continue
			}
			for _, b := range list[i+1:] {
				if b.Lib == "" && b.Start >= a.End && exclusive(a, b) {
					rep.NodeLeads = append(rep.NodeLeads, dur(b.Start-n.Gone))
					break
				}
			}
		}
	}
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
