package chaos_test

import "github.com/zklock/zklock/chaos"

// goldenStaleNoLoss: issue 33, excuse 2 — a waiter frozen mid-acquisition
// gets, 2ms after it is resumed, a grant older than the holder that got in
// during the freeze, and believes it until a normal release 900ms later: its
// loss signal never fired.
func goldenStaleNoLoss() *chaos.Outcome {
	a := h{Proc: "w1.1", Prim: "election", Mode: "w", Tok: 10, Wait: 1000, From: 4702, To: 5602, Why: chaos.WhyReleased}
	r := h{Proc: "w2.1", Prim: "election", Mode: "w", Tok: 20, Wait: 1100, From: 3500, To: 6000, Why: chaos.WhyReleased}
	wr := w{H: r, W: 1, V: 1, At: 3600, Res: chaos.ResOK}
	return newHistory().fault(chaos.FaultPause, a.Proc, 1200, 4700).
		hold(a).acquire(r).write(wr).commit(wr).release(r).outcome()
}

// curatorMutex is a Curator worker's hold of the mutex with node curNode1.
func curatorMutex(from, to int64) h {
	return h{Proc: "c1.1", Prim: "mutex", Mode: "w", Lib: chaos.LibCurator, Node: curNode1, Wait: from - 100, From: from, To: to,
		Why: chaos.WhyReleased}
}

// goldenPeerPartitionNodeLive: issue 33, excuse 3 — a zklock grant 10ms
// after a Curator holder's partition began. The Curator holder's node was
// deleted when its session expired, 2s after the partition began: the
// zklock holder was granted a lock whose earlier node was live.
func goldenPeerPartitionNodeLive() *chaos.Outcome {
	c := curatorMutex(1000, 3000)
	z := h{Proc: "w2.1", Prim: "mutex", Mode: "w", Tok: 20, Wait: 1000, From: 1510, To: 1600, Why: chaos.WhyReleased}
	wc := w{H: c, W: 1, V: 1, At: 1100, Res: chaos.ResOK}
	wz := w{H: z, W: 1, V: 2, At: 1550, Res: chaos.ResOK}
	return newHistory().fault(chaos.FaultPartition, c.Proc, 1500, 5000).node(curNode1, 901, 3500).
		acquire(c).write(wc).commit(wc).conn(c.Proc, c.Lib, "SUSPENDED", 2800).release(c).conn(c.Proc, c.Lib, "LOST", 5100).
		acquire(z).write(wz).commit(wz).release(z).outcome()
}

// goldenPeerLegit is the control: the Curator holder's node was deleted
// (its session expired) 50ms before the zklock rival acquired; Curator's
// holder, never told, believes until 3s. Reported apart as Curator's.
func goldenPeerLegit() *chaos.Outcome {
	c := curatorMutex(1000, 3000)
	z := h{Proc: "w2.1", Prim: "mutex", Mode: "w", Tok: 20, Wait: 1000, From: 2550, To: 2600, Why: chaos.WhyReleased}
	wc := w{H: c, W: 1, V: 1, At: 1100, Res: chaos.ResOK}
	wz := w{H: z, W: 1, V: 2, At: 2560, Res: chaos.ResOK}
	return newHistory().fault(chaos.FaultPartition, c.Proc, 500, 4000).node(curNode1, 901, 2500).
		acquire(c).write(wc).commit(wc).release(c).acquire(z).write(wz).commit(wz).release(z).outcome()
}

// semHolds are two zklock leases of the semaphore (limit 2): w1.1's from
// 1s, ending at aTo for aWhy, and w2.1's from 1.01s to 6s.
func semHolds(aTo int64, aWhy string) (h, h) {
	return h{Proc: "w1.1", Prim: "semaphore", Mode: "l", Tok: 10, Wait: 900, From: 1000, To: aTo, Why: aWhy},
		h{Proc: "w2.1", Prim: "semaphore", Mode: "l", Tok: 11, Wait: 950, From: 1010, To: 6000, Why: chaos.WhyReleased}
}

// goldenSemaphoreFrozenEarly: issue 33, excuse 4 — the semaphore's count
// dropped a frozen lease however early the third lease came (100ms into
// the freeze).
func goldenSemaphoreFrozenEarly() *chaos.Outcome {
	a, b := semHolds(4705, chaos.WhyLost)
	c := h{Proc: "w3.1", Prim: "semaphore", Mode: "l", Tok: 12, Wait: 1000, From: 1300, To: 1400, Why: chaos.WhyReleased}
	return newHistory().fault(chaos.FaultPause, a.Proc, 1200, 4700).hold(a).hold(b).hold(c).outcome()
}

// goldenSemaphorePeerPartition: issue 33, excuse 4 — the count dropped a
// Curator lease once Curator's process was partitioned, though its node
// was live until its session expired 2s later.
func goldenSemaphorePeerPartition() *chaos.Outcome {
	const node = lockDir + "semaphore/leases/_c_91aa-lease-0000000001"
	c := h{Proc: "c1.1", Prim: "semaphore", Mode: "l", Lib: chaos.LibCurator, Node: node, Wait: 900, From: 1000, To: 3000,
		Why: chaos.WhyReleased}
	_, b := semHolds(0, "")
	z := h{Proc: "w3.1", Prim: "semaphore", Mode: "l", Tok: 12, Wait: 1000, From: 1510, To: 1600, Why: chaos.WhyReleased}
	return newHistory().fault(chaos.FaultPartition, c.Proc, 1500, 5000).node(node, 901, 3500).
		hold(c).hold(b).hold(z).outcome()
}

// goldenSemaphoreLateLossBlamedOnCurator: issue 33, excuse 4 — a zklock
// lease (w1.1) believed until 4s while Curator's c1.1, whose LOST came
// during its wait, was granted a lease in its new session (its node lived
// from 2.7s to after its release). The old checker laid the third lease at
// Curator's door; Curator's lease was real, and w1.1's late belief is the
// excess.
func goldenSemaphoreLateLossBlamedOnCurator() *chaos.Outcome {
	const node = lockDir + "semaphore/leases/_c_b7c2-lease-0000000005"
	a, b := semHolds(4000, chaos.WhyLost)
	a.Dl = 2600
	c := h{Proc: "c1.1", Prim: "semaphore", Mode: "l", Lib: chaos.LibCurator, Node: node, Wait: 1500, From: 3200, To: 3250,
		Why: chaos.WhyReleased}
	return newHistory().node(node, 2700, 3300).hold(a).hold(b).
		conn(c.Proc, c.Lib, "SUSPENDED", 2000).conn(c.Proc, c.Lib, "LOST", 2500).conn(c.Proc, c.Lib, "RECONNECTED", 2600).
		hold(c).outcome()
}

// goldenPeerNeighbourLostIncrement: issue 33, excuse 5 — w1.1's last write,
// sent at 1.09s before its release, committed after the write of Curator's
// legitimate holder c1.1 (granted at 1.2s, after w1.1 released): one
// increment lost, which the old checker counted as Curator's because the
// write before it was.
func goldenPeerNeighbourLostIncrement() *chaos.Outcome {
	const node = lockDir + "mutex/_c_0d3f-lock-0000000002"
	z := h{Proc: "w1.1", Prim: "mutex", Mode: "w", Tok: 10, Wait: 900, From: 1000, To: 1100, Why: chaos.WhyReleased}
	c := h{Proc: "c1.1", Prim: "mutex", Mode: "w", Lib: chaos.LibCurator, Node: node, Wait: 1000, From: 1200, To: 1300,
		Why: chaos.WhyReleased}
	z1 := w{H: z, W: 1, V: 1, At: 1020, Res: chaos.ResOK}
	z2 := w{H: z, W: 2, V: 2, At: 1090, Reply: 3000, Res: chaos.ResUnknown}
	c1 := w{H: c, W: 1, V: 2, At: 1250, Res: chaos.ResOK}
	return newHistory().node(node, 1001, 1310).
		acquire(z).write(z1).write(z2).release(z).acquire(c).write(c1).release(c).
		commit(z1).commit(c1).commit(z2).outcome()
}
