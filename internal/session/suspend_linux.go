package session

import "golang.org/x/sys/unix"

// suspendedTotal returns how long the machine has been suspended since it
// booted: CLOCK_BOOTTIME counts suspended time, CLOCK_MONOTONIC (Go's
// monotonic clock, on which every deadline here is measured) does not.
func suspendedTotal() int64 {
	var boot, mono unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil || unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) != nil {
		return 0
	}
	return boot.Nano() - mono.Nano()
}
