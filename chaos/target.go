package chaos

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/zklock/zklock"
)

// holderPID returns the process id of prim's first holder, read from its
// node's data ("host:pid", zklock's default), or 0 when there is none or it
// cannot be read: faults aimed at a holder are the ones that test the
// loss signal and fencing.
func holderPID(ctx context.Context, s *zklock.Session, paths Paths, prim string) int {
	switch prim {
	case "mutex", "reentrant", "rwmutex", "election":
	default:
		return 0
	}
	cs, err := zklock.Contenders(ctx, s, paths.Lock(prim))
	if err != nil || len(cs) == 0 {
		return 0
	}
	_, pid, _ := strings.Cut(string(cs[0].Data), ":")
	n, _ := strconv.Atoi(pid)
	return n
}

// aimLocks are the locks a client fault aims at: the exclusive ones, where a
// holder that believes too long shows as an overlap.
var aimLocks = []string{"mutex", "reentrant", "rwmutex", "election"}

// aim waits, polling for up to 3s, until w holds a lock whose holders
// write (the mutex, the reentrant mutex, the election; the RW lock's
// first contender may be a reader), so that the fault about to hit it
// lands mid-hold (Config.Victims) on a holder whose late writes show.
func (in *injector) aim(ctx context.Context, w *worker) {
	for i := 0; i < 30 && ctx.Err() == nil; i++ {
		for _, lock := range []string{"mutex", "reentrant", "election"} {
			if holderPID(ctx, in.admin, in.paths, lock) == w.pid() {
				return
			}
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// victim picks the worker a client fault hits: two times in three the
// holder of a random lock, else any worker.
// The seed decides the draws, but who holds depends on the run: the same
// seed gives the same kinds and durations, not always the same victims.
func (in *injector) victim(ctx context.Context) *worker {
	aim, lock, anyone := in.rnd.IntN(3) < 2, aimLocks[in.rnd.IntN(len(aimLocks))], in.workers[in.rnd.IntN(len(in.workers))]
	if !aim {
		return anyone
	}
	if pid := holderPID(ctx, in.admin, in.paths, lock); pid != 0 {
		for _, w := range in.workers {
			if w.pid() == pid {
				return w
			}
		}
	}
	return anyone
}
