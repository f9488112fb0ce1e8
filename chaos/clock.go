package chaos

import (
	"time"

	"golang.org/x/sys/unix"
)

// Now reads CLOCK_MONOTONIC in nanoseconds. Unlike time.Now's monotonic
// reading, which is private to a process, CLOCK_MONOTONIC is one clock for
// every process on the machine, so intervals logged by different workers
// and by the coordinator can be compared directly. It does not stop while a
// process is frozen with SIGSTOP, which is what makes a paused holder's
// belief overlap a rival's.
func Now() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("chaos: CLOCK_MONOTONIC: " + err.Error()) // Linux always has it
	}
	return ts.Nano()
}

// dur converts a difference of Now readings to a Duration.
func dur(ns int64) time.Duration { return time.Duration(ns) }
