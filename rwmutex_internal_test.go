package zklock

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zklock/zklock/internal/queue"
)

// A reader waits only for the nearest earlier writer: never for readers,
// never for anything after it. The listing comes in any order.
func TestReaderWaitsForNearestWriter(t *testing.T) {
	r, w := queue.KindRead, queue.KindWrite
	for _, tc := range []struct {
		kinds []string
		ours  int
		want  int // index of the contender we wait for, -1: we hold
	}{
		{[]string{r}, 0, -1},
		{[]string{r, r, r}, 2, -1},
		{[]string{w, r}, 1, 0},
		{[]string{w, r, r}, 2, 0},
		{[]string{w, r, w, r}, 3, 2},
		{[]string{r, r, w}, 1, -1},
		{[]string{w, w, r, r, w}, 3, 1},
	} {
		names := make([]string, len(tc.kinds))
		for i, k := range tc.kinds {
			names[i] = fmt.Sprintf("_c_%d-%s%010d", i, k, i)
		}
		ours := names[tc.ours]
		want := ""
		if tc.want >= 0 {
			want = names[tc.want]
		}
		rand.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		s, ok := queue.Scan(names, ours, writer, r, w)
		if !ok || s.Blocked != (want != "") || (s.Blocked && s.Blocker.Name != want) {
			t.Errorf("%v, ours %d: blocked %v by %q, want %q", tc.kinds, tc.ours, s.Blocked, s.Blocker.Name, want)
		}
	}
}
