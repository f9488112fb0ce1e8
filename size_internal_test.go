package zklock

import (
	"testing"
	"unsafe"
)

// A Mutex is one allocation with its queue and line, sized for a service
// that holds many (internal/hold's TestHeldSizes has the rest of a held
// lock).
func TestMutexSize(t *testing.T) {
	if got := unsafe.Sizeof(Mutex{}); got > 112 {
		t.Errorf("Mutex is %d bytes, want at most 112", got)
	}
}
