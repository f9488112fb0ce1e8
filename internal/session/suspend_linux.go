package session

import (
	"time"

	"golang.org/x/sys/unix"
)

// suspendedTotal returns how long the machine has been suspended since it
// booted, plus a constant: CLOCK_BOOTTIME counts suspended time,
// CLOCK_MONOTONIC (Go's monotonic clock, on which every deadline here is
// measured) does not. Only differences between its results are used, so
// the monotonic side is Go's own clock, read without a system call, from
// one reading of CLOCK_MONOTONIC taken with monoBase: one system call a
// look instead of two (every grant looks twice).
func suspendedTotal() int64 {
	var boot unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil || !monoOK {
		return 0
	}
	return boot.Nano() - (monoAtBase + int64(time.Since(monoBase)))
}

// monoBase and monoAtBase are one instant on Go's monotonic clock and on
// CLOCK_MONOTONIC: the time between the two reads is an error that every
// result of suspendedTotal shares, so it cancels in their differences.
var monoBase, monoAtBase, monoOK = func() (time.Time, int64, bool) {
	var mono unix.Timespec
	t := time.Now()
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) != nil {
		return t, 0, false
	}
	return t, mono.Nano(), true
}()
