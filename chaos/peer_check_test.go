package chaos_test

import (
	"strings"
	"testing"

	"github.com/zklock/zklock/chaos"
)

// curatorHolds: Curator worker C (no token) holds the mutex over [10,300]
// with node cNode and writes 1 at 50 and, after B acquired, 2 at 250;
// zklock's B holds token 20 over [150,280] and writes 2 at 200. conns are
// C's connection events as (ms, state) pairs. The coordinator saw no node
// of C's: nodeGone records one.
func curatorHolds(conns ...any) *chaos.Outcome {
	evs := cat(hold("C", "mutex", "w", 0, 10, 300), hold("B", "mutex", "w", 20, 150, 280),
		[]chaos.Event{write("C", "mutex", 0, 1, 1, 50, chaos.ResOK), write("B", "mutex", 20, 1, 2, 200, chaos.ResOK),
			write("C", "mutex", 0, 2, 2, 250, chaos.ResOK)})
	evs = curatorC(evs, conns...)
	rs := map[string][]chaos.Receipt{"mutex": {{Proc: "C", W: 1, V: 1}, {Proc: "B", W: 1, Tok: 20, V: 2}, {Proc: "C", W: 2, V: 2}}}
	return outcome(evs, rs, map[string]int64{"mutex": 2})
}

// cNode is Curator worker C's lock node in these tests.
const cNode = "/chaos-1/locks/mutex/_c_77-lock-0000000003"

// nodeGone records that C's node was seen from 5ms and gone by gone ms (0:
// never seen gone).
func nodeGone(o *chaos.Outcome, gone int64) *chaos.Outcome {
	o.Nodes = map[string]chaos.NodeLife{cNode: {Seen: 5 * ms, Gone: gone * ms}}
	return o
}

// A Curator holder cut off (SUSPENDED before the rival acquired, LOST
// after) keeps believing it holds after its node was deleted (its session
// expired) and its unfenced write commits: that is reported as Curator's,
// with the lost increment, not as a violation.
func TestCheckerPeerLostSession(t *testing.T) {
	rep := chaos.Check(nodeGone(curatorHolds(100, "SUSPENDED", 260, "LOST", 270, "RECONNECTED"), 140))
	if !rep.OK() {
		t.Fatalf("violations:\n%s", rep)
	}
	if len(rep.PeerOverlaps) != 1 || rep.PeerOverlaps[0].Committed != 1 || rep.PeerLost["mutex"] != 1 {
		t.Fatalf("Curator's overlaps %+v, lost %v; want one overlap with 1 committed write and 1 lost increment",
			rep.PeerOverlaps, rep.PeerLost)
	}
	ev := rep.PeerOverlaps[0].Evidence
	if !strings.Contains(rep.String(), "Curator's and Kazoo's, not zklock's") || !strings.Contains(ev, "seen deleted 10ms before the rival acquired") ||
		!strings.Contains(ev, "SUSPENDED 50ms before") {
		t.Fatalf("report does not show the evidence:\n%s", rep)
	}
}

// Without the ground truth that the Curator holder's node was gone before
// the rival acquired, the overlap is a violation, whatever Curator's
// connection said: the checker excuses Curator only for what Curator is
// known to get wrong, a holder not told that its node is gone.
func TestCheckerPeerNoExcuse(t *testing.T) {
	mustFind(t, curatorHolds(100, "SUSPENDED", 120, "RECONNECTED"), "no record of C's node")
	mustFind(t, curatorHolds(), "believed they held together")
	mustFind(t, nodeGone(curatorHolds(100, "SUSPENDED", 140, "LOST"), 260), "C's node _c_77-lock-0000000003 was deleted 110ms after the rival acquired (tolerance 50ms)")
	mustFind(t, nodeGone(curatorHolds(100, "SUSPENDED", 140, "LOST"), 0), "was never seen gone")
}

// The watcher may stamp a deletion a little after a grant it precedes (a
// zklock waiter is granted on the notification itself): within PeerLag the
// node counts as gone, and the evidence says so.
func TestCheckerPeerWithinWatcherLag(t *testing.T) {
	rep := chaos.Check(nodeGone(curatorHolds(100, "SUSPENDED", 140, "LOST"), 160))
	if !rep.OK() || len(rep.PeerOverlaps) != 1 || !strings.Contains(rep.PeerOverlaps[0].Evidence, "seen deleted 10ms after the rival acquired, within the watcher's 50ms") {
		t.Fatalf("want the overlap Curator's, its node seen gone 10ms after the grant:\n%s", rep)
	}
}

// A Curator holder that lost its session writes a value it read long ago:
// the counter goes back three increments, and the zklock holders after it
// count again over 2 and 3. Those values are written twice, but the three
// lost increments are Curator's, not a violation; a zklock write that
// overwrites another's with no peer write before it still is one.
func TestCheckerPeerStaleWriteSetsCounterBack(t *testing.T) {
	evs := cat(hold("C", "mutex", "w", 0, 10, 400), hold("B", "mutex", "w", 20, 150, 280), hold("D", "mutex", "w", 30, 300, 390),
		[]chaos.Event{write("C", "mutex", 0, 1, 1, 50, chaos.ResOK),
			write("B", "mutex", 20, 1, 2, 200, chaos.ResOK), write("B", "mutex", 20, 2, 3, 210, chaos.ResOK), write("B", "mutex", 20, 3, 4, 220, chaos.ResOK),
			write("C", "mutex", 0, 2, 2, 250, chaos.ResOK),
			write("D", "mutex", 30, 1, 3, 310, chaos.ResOK), write("D", "mutex", 30, 2, 4, 320, chaos.ResOK)})
	evs = curatorC(evs, 100, "SUSPENDED", 140, "LOST")
	evs[1].Node = cNode
	rs := map[string][]chaos.Receipt{"mutex": {{Proc: "C", W: 1, V: 1},
		{Proc: "B", W: 1, Tok: 20, V: 2}, {Proc: "B", W: 2, Tok: 20, V: 3}, {Proc: "B", W: 3, Tok: 20, V: 4},
		{Proc: "C", W: 2, V: 2}, {Proc: "D", W: 1, Tok: 30, V: 3}, {Proc: "D", W: 2, Tok: 30, V: 4}}}
	rep := chaos.Check(nodeGone(outcome(evs, rs, map[string]int64{"mutex": 4}), 145))
	if !rep.OK() {
		t.Fatalf("violations:\n%s", rep)
	}
	if rep.PeerLost["mutex"] != 3 {
		t.Fatalf("increments lost to Curator %v, want 3", rep.PeerLost)
	}
	rs["mutex"][6].V = 3 // D's second write overwrote its first: no peer write between
	mustFind(t, nodeGone(outcome(evs, rs, map[string]int64{"mutex": 3}), 145), "value 3 written by D token 30 after the counter reached 3 (by D token 30)")
}

// A session Curator lost and replaced before C began to wait is not the
// session C's hold rests on: the overlap is a violation, not Curator's.
func TestCheckerPeerLostBeforeItsWait(t *testing.T) {
	mustFind(t, curatorHolds(2, "SUSPENDED", 5, "LOST", 6, "RECONNECTED"), "believed they held together")
}

// curatorStaleLease: zklock's A and B hold the semaphore (limit 2) over
// [20,250] and [22,300]; Curator's C began to wait at 4ms and returned a
// lease at 200, whose node was seen from 10ms and gone by gone ms (0: never
// seen gone). conns are C's connection events as (ms, state) pairs.
func curatorStaleLease(gone int64, conns ...any) *chaos.Outcome {
	const node = "/chaos-1/locks/semaphore/leases/_c_12-lease-0000000031"
	evs := cat(hold("A", "semaphore", "l", 20, 20, 250), hold("B", "semaphore", "l", 22, 22, 300),
		hold("C", "semaphore", "l", 0, 5, 260), // its wait at 4ms
		[]chaos.Event{write("C", "semaphore", 0, 1, 1, 210, chaos.ResRejected)})
	for i := range evs {
		if evs[i].Proc == "C" && evs[i].Ev == chaos.EvAcquire {
			evs[i].T, evs[i].Node = 200*ms, node
		}
	}
	o := outcome(curatorC(evs, conns...), map[string][]chaos.Receipt{"semaphore": nil}, map[string]int64{"semaphore": 0})
	o.Nodes = map[string]chaos.NodeLife{node: {Seen: 10 * ms, Gone: gone * ms}}
	return o
}

// curatorC marks C's events as a Curator worker's and adds its connection
// events, given as (ms, state) pairs.
func curatorC(evs []chaos.Event, conns ...any) []chaos.Event {
	for i := range evs {
		if evs[i].Proc == "C" {
			evs[i].Lib = chaos.LibCurator
			if evs[i].Ev == chaos.EvAcquire && evs[i].Prim == "mutex" {
				evs[i].Node = cNode
			}
		}
	}
	for i := 0; i+1 < len(conns); i += 2 {
		evs = append(evs, chaos.Event{Ev: chaos.EvConn, Proc: "C", Lib: chaos.LibCurator, T: int64(conns[i].(int)) * ms, Res: conns[i+1].(string)})
	}
	return evs
}

// Curator's semaphore returned a lease 208ms after Curator reported the
// session it was waiting in LOST (soak at ea469e0, c1.20: its lease node
// had gone with that session, and it made none in the new one): the third
// lease is Curator's, reported apart. What decides is the node: a lease
// whose node was deleted before it was returned had no node behind it; one
// whose node was live then (whatever Curator's connection said) is real,
// and the excess is a rival's: a violation.
func TestCheckerPeerLeaseReturnedAfterLost(t *testing.T) {
	rep := chaos.Check(curatorStaleLease(150, 100, "SUSPENDED", 150, "LOST", 160, "RECONNECTED"))
	if !rep.OK() || len(rep.PeerOverlaps) != 1 || rep.PeerOverlaps[0].Peer.Proc != "C" || rep.PeerOverlaps[0].Writes != 1 {
		t.Fatalf("want C's lease reported apart as Curator's, with its 1 write:\n%s", rep)
	}
	if ev := rep.PeerOverlaps[0].Evidence; !strings.Contains(ev, "seen deleted 50ms before it returned it") || !strings.Contains(ev, "LOST 50ms before") {
		t.Fatalf("evidence %q", ev)
	}
	const three = "3 leases believed held at once by 3 holders (limit 2) when C"
	mustFind(t, curatorStaleLease(300, 100, "SUSPENDED", 150, "LOST", 160, "RECONNECTED"), three) // node live when returned
	mustFind(t, curatorStaleLease(0, 100, "SUSPENDED", 150, "LOST"), three)                       // never seen gone
	partitioned := curatorStaleLease(300)
	partitioned.Faults = []chaos.Fault{{Kind: chaos.FaultPartition, Target: "C", Start: 190 * ms, End: 400 * ms}}
	mustFind(t, partitioned, three)
}
