//go:build !linux

package session

// suspendedTotal is 0 where no clock that counts suspended time is read:
// there a resume from suspend is not detected (docs/ownership.md).
func suspendedTotal() int64 { return 0 }
