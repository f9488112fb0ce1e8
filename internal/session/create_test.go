package session

import (
	"fmt"
	"slices"
	"testing"
)

// The dir cache: unknown keeps order and skips what is known; forget
// makes a dir unknown again; the cache stays within its bound.
func TestDirCache(t *testing.T) {
	var d dirCache
	all := []string{"/a", "/a/b", "/a/b/c"}
	if got := d.unknown(all); !slices.Equal(got, all) {
		t.Fatalf("empty cache: unknown %v", got)
	}
	d.know(all)
	if got := d.unknown(all); got != nil {
		t.Fatalf("after know: unknown %v", got)
	}
	d.forget([]string{"/a/b"})
	if got := d.unknown(all); !slices.Equal(got, []string{"/a/b"}) {
		t.Fatalf("after forget: unknown %v", got)
	}
	for i := range 3 * maxDirs {
		d.know([]string{fmt.Sprintf("/x/%d", i)})
	}
	if n := len(d.m); n > maxDirs {
		t.Fatalf("%d entries, bound %d", n, maxDirs)
	}
}
