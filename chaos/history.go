package chaos

import "fmt"

// Reuse is a receipt sequence number that the servers gave to two different
// writes' receipts. Each create of a sequential node takes its parent's next
// number, and the receipt directories are never deleted, so a number given
// twice means the servers forgot the first create after they had committed
// it: it was acknowledged to its writer, or a harvest read it. That is the
// servers' history going back, not something a lock recipe can cause or
// prevent; the run's other violations near At are its consequences.
type Reuse struct {
	Prim          string
	Seq           int64
	First, Second string // the two writes, "w1.1 write 5"
	At            int64  // when the second was seen
}

func writeName(proc string, w int64) string { return fmt.Sprintf("%s write %d", proc, w) }

// checkHistory collects the evidence that the servers lost committed
// transactions: the sequence numbers the harvest found twice, and those of
// acknowledged writes whose receipt never came but whose number another
// write's receipt carries.
func checkHistory(r *Outcome, committed map[writeKey]Receipt, rep *Report) {
	rep.ServerLost = append(rep.ServerLost, r.Reused...)
	bySeq := map[string]map[int64]Receipt{}
	for prim, rs := range r.Receipts {
		bySeq[prim] = map[int64]Receipt{}
		for _, rc := range rs {
			bySeq[prim][rc.Seq] = rc
		}
	}
	for _, e := range r.Events {
		if e.Ev != EvWrite || e.Res != ResOK || e.Seq == 0 {
			continue
		}
		if _, ok := committed[writeKey{e.Proc, e.W}]; ok {
			continue
		}
		if rc, ok := bySeq[e.Prim][e.Seq]; ok && (rc.Proc != e.Proc || rc.W != e.W) {
			rep.ServerLost = append(rep.ServerLost, Reuse{Prim: e.Prim, Seq: e.Seq,
				First: writeName(e.Proc, e.W), Second: writeName(rc.Proc, rc.W), At: e.T1})
		}
	}
}
