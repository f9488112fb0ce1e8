package chaos

import (
	"sort"
	"time"
)

// lossLeads measures how far the loss signal ran ahead of the rival: for
// every hold of an exclusive primitive (mutex, reentrant, election, or an
// RWMutex hold against a writer) that ended with its loss signal while its
// process ran, the time from the signal to the next conflicting
// acquisition. A negative lead is a believed overlap, which checkOverlaps
// reports; this records how close the safe ones came. Holds of a process
// frozen during the hold, and stale grants, are left out: a frozen process
// sees its signal late by construction, and fencing is what protects it.
// Each lead is also filed under the kind of the fault in whose window (from
// its start to the next fault's) the signal came.
func lossLeads(r *Outcome, ivs []Interval, rep *Report) {
	for i, a := range ivs {
		if _, stale := acquiringFreeze(r, a); a.Why != WhyLost || counting(a.Prim) || pausedBefore(r, a, a.End) || stale {
			continue
		}
		for _, b := range ivs[i+1:] {
			if b.Prim == a.Prim && !sameHolder(a, b) && b.Start >= a.End && exclusive(a, b) {
				lead := time.Duration(b.Start - a.End)
				rep.LossLeads = append(rep.LossLeads, lead)
				if k := faultAt(r, a.End); k != "" {
					rep.LeadsByKind[k] = append(rep.LeadsByKind[k], lead)
				}
				break
			}
		}
	}
}

// faultAt returns the kind of the last fault that began at or before t, or
// "" if none had. Faults come one at a time, in order.
func faultAt(r *Outcome, t int64) string {
	i := sort.Search(len(r.Faults), func(i int) bool { return r.Faults[i].Start > t })
	if i == 0 {
		return ""
	}
	return r.Faults[i-1].Kind
}
