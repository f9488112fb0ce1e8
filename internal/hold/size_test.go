package hold

import (
	"testing"
	"unsafe"

	"github.com/zklock/zklock/internal/queue"
)

// What a held lock keeps is sized for a service that holds many at once
// (issue 38: <= 400 B a lock with 100,000 held, its handle included; see
// BenchmarkHeldScale). A field added to one of these structs moves it to
// a larger size class: make that a choice, measured, not an accident.
func TestHeldSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"hold.Hold", unsafe.Sizeof(Hold{}), 32},
		{"hold.Line", unsafe.Sizeof(Line{}), 32},
		{"hold.Slot", unsafe.Sizeof(Slot{}), 40},
		{"queue.Queue", unsafe.Sizeof(queue.Queue{}), 40},
		{"queue.Place", unsafe.Sizeof(queue.Place{}), 48},
		{"queue.Held", unsafe.Sizeof(queue.Held{}), 48},
		{"queue.Epoch", unsafe.Sizeof(queue.Epoch{}), 8},
	} {
		if c.got > c.want {
			t.Errorf("%s is %d bytes, want at most %d", c.name, c.got, c.want)
		}
	}
}
