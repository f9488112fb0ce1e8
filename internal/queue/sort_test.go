package queue

import "testing"

// A read node placed beside a writer (a downgrade) has the writer's
// sequence; every client must order the pair the same way, writer first,
// whatever the random prefixes.
func TestSortTieWriterFirst(t *testing.T) {
	w := "_c_ffffffff-0000-4000-8000-000000000000-__WRIT__0000000007"
	r := "_c_00000000-0000-4000-8000-000000000000-__READ__0000000007"
	later := "_c_11111111-0000-4000-8000-000000000000-__WRIT__0000000008"
	for _, names := range [][]string{{w, r, later}, {later, r, w}, {r, later, w}} {
		cs := Sort(names, KindRead, KindWrite)
		if len(cs) != 3 || cs[0].Name != w || cs[1].Name != r || cs[2].Name != later {
			t.Fatalf("Sort(%v) = %v", names, cs)
		}
	}
}
