package hold

import (
	"context"

	"github.com/zklock/zklock/internal/queue"
)

// Handing a hold over. A call that waited anywhere (in the server's queue,
// in a cohort, in a shared handle's slot, behind a downgrade) may find the
// hold it waited for dead by the time it would return it: its epoch ended,
// or its bound (Layers.MaxHold) passed, and a rival may hold by now. So
// the rule of every call that hands a hold to its caller is one check,
// handOver, made at the moment it returns success: the hold's own loss
// signal (Hold.Lost), not only its session's epoch. A hold that fails it
// is given back (giveBack), and the call waits on for another, or fails
// when it has nothing to wait for (a downgrade whose write hold is gone).
// Line.acquire (every Line's, cohort's and downgrade's acquisition) and
// Slot.Lock (a shared handle's, after its wait for the slot) are the two
// places that hand holds over; a Multi hands over what they did, and looks
// at every part once more (AnyLost).

// handOver reports whether h may be handed to its caller: its loss signal
// has not fired.
func handOver(h *Hold) bool { return !h.IsLost() }

// giveBack releases h, which failed handOver, through give (its Line's or
// cohort's Release), within releaseTimeout: it is lost, so the release
// only stops its layers and, if the session survived, deletes its nodes.
func giveBack(ctx context.Context, h *Hold, give func(context.Context, *Hold) error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	_ = give(rctx, h)
}

// Stands reports whether h's nodes still exist as its session's (one
// request each): the loss signal does not fire when another client deletes
// them (Break), so a hold that waited after its grant is looked at once
// more before it is handed over (Slot).
func (l *Line) Stands(ctx context.Context, h *Hold) (bool, error) {
	return h.stands(ctx, l.Q.Conn)
}

// Stands is Line.Stands for a local hold of the cohort.
func (c CohortLine) Stands(ctx context.Context, h *Hold) (bool, error) {
	return h.stands(ctx, h.co.q.Conn)
}

func (h *Hold) stands(ctx context.Context, conn queue.Conn) (bool, error) {
	for _, n := range h.place.Held {
		st, err := conn.Stat(ctx, n.Path)
		if err != nil {
			return false, err
		}
		if st == nil || st.EphemeralOwner != n.Epoch.SessionID {
			return false, nil
		}
	}
	return true, nil
}
