package doccheck

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoMergeConflictMarkers: no file the repository tracks keeps a merge's
// conflict markers. A merge of two branches that both added to the
// CHANGELOG's "Fixed" list was committed with them, and nothing noticed:
// Markdown renders them as text.
func TestNoMergeConflictMarkers(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Split(strings.TrimSpace(gitIn(t, repo)("ls-files")), "\n")
	if len(files) < 50 {
		t.Fatalf("git ls-files listed %d files; expected the repository's", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for n := 1; sc.Scan(); n++ {
			l := sc.Text()
			if strings.HasPrefix(l, "<<<<<<< ") || strings.HasPrefix(l, ">>>>>>> ") || l == "=======" && conflictNear(data) {
				t.Errorf("%s:%d: merge conflict marker %q", f, n, l)
			}
		}
	}
}

// conflictNear reports whether data has an opening marker: "=======" alone
// is also a Markdown heading underline.
func conflictNear(data []byte) bool {
	return bytes.Contains(data, []byte("\n<<<<<<< ")) || bytes.HasPrefix(data, []byte("<<<<<<< "))
}
