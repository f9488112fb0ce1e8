package zklock

import (
	"fmt"
	"slices"
)

// FuzzSharedHandles' focused inputs (issue 43). An interleaving that
// breaks a primitive needs several calls on one primitive in a row, in
// the right states: finding 2 is a writer that waited and holds, a rival
// queued behind it, and its handle's Downgrade with an Unlock of another
// goroutine inside its exchange. With targets among 57 lanes and 20 ops a
// step, random inputs almost never line those up (12 minutes, 3 runs, not
// found). A focused input (byte 3's bit 6) drives one primitive
// (focusKinds), and most of its steps do what the primitive's state makes
// a natural next call, so that a short random input is a
// plausible use of one primitive by three sessions and their goroutines.
// runShared runs a focused input once on each primitive, each time in a
// new world (the focused one's lanes are the only ones it drives), so
// that every input the fuzzer tries explores all of them:
//
//   - op bits 0-1 = 0 or 1, a natural call: target bits 0-1 the session
//     (3: the one whose handle holds, else bits 2-3's), arg bits 0-1 which
//     of the calls natural to its handle's state (naturalCalls), run on
//     its first lane with no call pending;
//   - 2, a chain step (fuzz_sched_internal_test.go) whose calls are
//     natural ones: A on the session's first idle lane; B and C by target
//     bits 2-3 (chainLanes' modes); a, b and c by arg bits 0-1, 2-3 and
//     4-5, among the calls natural to each lane's state at the step's
//     start, a goroutine of A's handle doing another than the call before
//     it; ka arg bits 6-7, kb op bits 6-7; C on when op bits 2-3 are both
//     set, hang when bits 4-5 are;
//   - 3, any operation of stepShared (op>>2, faults included) on the lane
//     target chooses (target bits 0-1 the session as above, 4-7 the lane).
//
// The steps are read through a mask (unmask) seeded by the whole input:
// a focused input is a random program of the grammar above, and each
// mutation another. The fuzzer's mutants of its own corpus repeat their
// parents' steps, and runs of one byte: on 1e504b7, 0 of the 280 focused
// inputs of a 10-minute run's corpus reproduced finding 2 on the
// RWMutex, against 6 of 200 uniformly random 12-step inputs.
// focusMaxSteps bound a focused input (eight worlds a run).
//
// After each step the primitive's shape (how many sessions hold it, how
// many calls wait, whether its holder's grant came after a wait) reaches
// a branch of its own (markShape): the fuzzer's coverage sees states, not
// only code, and keeps an input that reaches a new one.
const (
	focusBit      = 0x40
	focusMaxSteps = 12
)

// unmask returns a focused input's steps, each byte xored with the next
// of a pseudo-random sequence (an xorshift's) seeded by a hash of the
// whole input: a mutation anywhere makes another program.
func unmask(in []byte) []byte {
	x := uint32(2166136261) // FNV-1a
	for _, b := range in {
		x = (x ^ uint32(b)) * 16777619
	}
	x |= 1
	steps := in[4:]
	out := make([]byte, len(steps))
	for i, b := range steps {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = b ^ byte(x>>24)
	}
	return out
}

// focusKinds are a session's primitives in lane order (newSharedHandles):
// the first lane's index in the session and the number of lanes.
var focusKinds = []struct {
	name     string
	off, num int
}{{"mutex", 0, 3}, {"seq", 3, 2}, {"reentrant", 5, 3}, {"rw", 8, 3}, {"leases", 11, 2},
	{"permits", 13, 2}, {"election", 15, 2}, {"multilock", 17, 2}}

// focusLanes returns the focused primitive's lanes in session si.
func (r *run) focusLanes(si int) []*handle {
	k := focusKinds[r.focus]
	base := si * perSession
	return r.hs[base+k.off : base+k.off+k.num]
}

// holds reports whether h's primitive holds in its session, and whether
// that is a write or exclusive hold. A Semaphore, an Election and a
// MultiLock are asked the model (their mutexes are held across requests).
func (r *run) holds(h *handle) (held, write bool) {
	switch {
	case h.m != nil:
		held = h.m.h.Current() != nil
		return held, held
	case h.re != nil:
		held = h.re.h.Current() != nil
		return held, held
	case h.rw != nil:
		if h.rw.w.Current() != nil {
			return true, true
		}
		h.rw.mu.Lock()
		defer h.rw.mu.Unlock()
		return len(h.rw.reads) > 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lanes(h) {
		if len(l.holds) > 0 {
			return true, h.sem == nil
		}
	}
	return false, false
}

// waiting counts the focused lanes' pending acquisitions (of sid < 0:
// every session's).
func (r *run) waiting(sid int) int {
	n := 0
	for si := range fuzzSessions {
		if sid >= 0 && si != sid {
			continue
		}
		for _, l := range r.focusLanes(si) {
			r.mu.Lock()
			c := l.pending
			r.mu.Unlock()
			if c != nil && c.acquires {
				n++
			}
		}
	}
	return n
}

// naturalCalls are the calls natural to h's handle in its state: a holder
// releases (an RWMutex's writer may downgrade, a reentrant owner enters
// again, any may be asked to lock by another goroutine), a handle whose
// Lock waits gets a TryLock or another Lock, an idle one locks.
func (r *run) naturalCalls(h *handle) []string {
	held, write := r.holds(h)
	switch {
	case h.rw != nil && write:
		return []string{"downgrade", "release"}
	case h.rw != nil && held:
		return []string{"runlock", "acquire", "rlock"}
	case h.re != nil && held:
		return []string{"acquire", "release", "try"}
	case held:
		return []string{"release", "acquire"}
	case r.waiting(h.sess) > 0:
		return []string{"try", "acquire"}
	case h.rw != nil:
		return []string{"acquire", "acquire", "rlock", "try"}
	}
	return []string{"acquire", "acquire", "try"}
}

// natural picks the natural call code chooses for h; besides (not "") is
// another goroutine's of the same handle, which does another call.
func (r *run) natural(h *handle, code byte, besides string) string {
	calls := r.naturalCalls(h)
	i := int(code) % len(calls)
	if calls[i] == besides && len(calls) > 1 {
		i = (i + 1) % len(calls)
	}
	return calls[i]
}

// focusSession decodes a target's session: bits 0-1, 3 meaning the
// session whose handle holds (the first), else bits 2-3's.
func (r *run) focusSession(target byte) int {
	if s := int(target & 3); s < fuzzSessions {
		return s
	}
	for si := range fuzzSessions {
		if held, _ := r.holds(r.focusLanes(si)[0]); held {
			return si
		}
	}
	return int(target>>2&3) % fuzzSessions
}

// idleLane returns the first lane of si's handle with no call pending (for
// a release of a Semaphore, one that holds a lease), nil when none is.
func (r *run) idleLane(si int, what string) *handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first *handle
	for _, l := range r.focusLanes(si) {
		if l.pending != nil {
			continue
		}
		if l.sem == nil || what != "release" || len(l.holds) > 0 {
			return l
		}
		if first == nil {
			first = l
		}
	}
	return first
}

// stepFocused decodes and starts one step of a focused input (see above).
func (r *run) stepFocused(op, target, arg byte) {
	si := r.focusSession(target)
	switch op & 3 {
	case 0, 1:
		h := r.idleLane(si, "")
		if h == nil {
			return
		}
		what := r.natural(h, arg&3, "")
		if what == "release" {
			if l := r.idleLane(si, what); l != nil {
				h = l
			}
		}
		r.start(h, what, arg)
	case 2:
		r.focusChain(si, op, target, arg)
	case 3:
		lanes := r.focusLanes(si)
		h := lanes[int(target>>4)%len(lanes)]
		r.stepShared(op>>2, byte(slices.Index(r.hs, h)), arg)
	}
}

// focusChain runs a focused chain step: run.chain's, its calls natural.
func (r *run) focusChain(si int, op, target, arg byte) {
	a := r.idleLane(si, "")
	if a == nil {
		return
	}
	b, c := r.chainLanes(a, target>>2&3)
	aw := r.natural(a, arg&3, "")
	ka, kb := int32(arg>>6), int32(op>>6)
	withC, hang := op>>2&3 == 3, op>>4&3 == 3
	// B's and C's calls are chosen now (a hook of A's exchange must not
	// look at a primitive whose call is under way).
	other := func(x *handle, code byte, prev string) string {
		if x.prim != a.prim {
			prev = ""
		}
		return r.natural(x, code, prev)
	}
	bw := other(b, arg>>2&3, aw)
	desc := fmt.Sprintf("chain: %s %s, at its request #%d %s %s", a.name, aw, ka, b.name, bw)
	trB := &tracer{hold: a}
	if withC {
		cw := other(c, arg>>4&3, bw)
		desc += fmt.Sprintf(", at its request #%d %s %s", kb, c.name, cw)
		trB = &tracer{at: kb, next: func() { r.insert(c, cw, arg, nil) }}
	} else {
		desc += ", its replies held back"
	}
	if hang {
		desc += fmt.Sprintf("; %s's ctx ends at its request #%d", a.name, ka)
	}
	r.logf("%s", desc)
	trA := &tracer{at: ka, hang: hang, next: func() { r.insert(b, bw, arg, trB) }}
	r.insert(a, aw, arg, trA)
}

// markShape reaches a branch of its own for the focused primitive's shape:
// how many sessions hold it (0, 1, more), how many of its calls wait (0-3),
// and whether its first holder's grant came after a wait.
func (r *run) markShape() {
	holders, waited := 0, false
	for si := range fuzzSessions {
		h := r.focusLanes(si)[0]
		if held, _ := r.holds(h); held {
			if holders == 0 {
				r.mu.Lock()
				waited = r.waitedGrant[h.prim]
				r.mu.Unlock()
			}
			holders++
		}
	}
	key := min(holders, 2)*8 + min(r.waiting(-1), 3)*2
	if waited {
		key++
	}
	// One case a shape: a counter of the fuzzer's coverage each.
	switch key {
	case 0:
		r.shapes[0]++
	case 1:
		r.shapes[1]++
	case 2:
		r.shapes[2]++
	case 3:
		r.shapes[3]++
	case 4:
		r.shapes[4]++
	case 5:
		r.shapes[5]++
	case 6:
		r.shapes[6]++
	case 7:
		r.shapes[7]++
	case 8:
		r.shapes[8]++
	case 9:
		r.shapes[9]++
	case 10:
		r.shapes[10]++
	case 11:
		r.shapes[11]++
	case 12:
		r.shapes[12]++
	case 13:
		r.shapes[13]++
	case 14:
		r.shapes[14]++
	case 15:
		r.shapes[15]++
	case 16:
		r.shapes[16]++
	case 17:
		r.shapes[17]++
	case 18:
		r.shapes[18]++
	case 19:
		r.shapes[19]++
	case 20:
		r.shapes[20]++
	case 21:
		r.shapes[21]++
	case 22:
		r.shapes[22]++
	case 23:
		r.shapes[23]++
	}
}

// acquires reports whether a call of what (stepShared's names) acquires.
func acquires(what string) bool {
	return what == "acquire" || what == "try" || what == "rlock" || what == "tryrlock"
}
