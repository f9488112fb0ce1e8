package zklock

import (
	"testing"

	"github.com/zklock/zklock/internal/queue"
)

// A reader waits only for the nearest earlier writer: never for readers,
// never for anything after it.
func TestReadBlocker(t *testing.T) {
	r, w := queue.KindRead, queue.KindWrite
	for _, tc := range []struct {
		kinds []string
		ours  int
		want  int
	}{
		{[]string{r}, 0, -1},
		{[]string{r, r, r}, 2, -1},
		{[]string{w, r}, 1, 0},
		{[]string{w, r, r}, 2, 0},
		{[]string{w, r, w, r}, 3, 2},
		{[]string{r, r, w}, 1, -1},
		{[]string{w, w, r, r, w}, 3, 1},
	} {
		cs := make([]queue.Contender, len(tc.kinds))
		for i, k := range tc.kinds {
			cs[i] = queue.Contender{Kind: k, Seq: int32(i)}
		}
		if got := readBlocker(cs, tc.ours); got != tc.want {
			t.Errorf("readBlocker(%v, %d) = %d, want %d", tc.kinds, tc.ours, got, tc.want)
		}
	}
}
