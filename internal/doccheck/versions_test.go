package doccheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// installLine finds a go get or go install of one of zklock's modules and
// its version.
var installLine = regexp.MustCompile(`go (?:get|install) (github\.com/zklock/zklock[^@\s` + "`" + `]*)@([^\s` + "`" + `]+)`)

// requireLine finds a requirement of one of zklock's modules in a go.mod.
var requireLine = regexp.MustCompile(`^\s*(?:require\s+)?(github\.com/zklock/zklock(?:/\S+)?)\s+(v\S+)`)

// pseudo is a pseudo-version without a tag below it (vX.0.0-time-commit),
// or one above a tag (vX.Y.Z-pre.0.time-commit, vX.Y.(Z+1)-0.time-commit).
var pseudo = regexp.MustCompile(`^v\d+\.\d+\.\d+-(?:.*\.)?(?:0\.)?(\d{14})-([0-9a-f]{12})$`)

// TestVersionsResolve: every version of zklock's modules that the docs
// tell a reader to fetch, or that a module of this repository requires,
// is one the go command can fetch from this repository: "latest", a tag
// that exists, or the pseudo-version of a commit in its history that
// holds the module (its time the commit's, in UTC). The published
// repository had no tag while the docs said @v0.1.0 and the fence and
// metrics modules required v0.1.0: none of that could be fetched.
func TestVersionsResolve(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	g := gitIn(t, repo)
	tags := map[string]bool{}
	for _, tag := range strings.Fields(g("tag", "-l")) {
		tags[tag] = true
	}
	mods := strings.Fields(g("ls-files", "--", "go.mod", "*/go.mod"))
	var modDirs []string // the modules' directories, the root's ""
	for _, m := range mods {
		modDirs = append(modDirs, strings.TrimSuffix(strings.TrimSuffix(m, "go.mod"), "/"))
	}
	checked := 0
	check := func(where, path, v string) {
		checked++
		if err := resolves(g, tags, moduleDir(modDirs, path), v); err != nil {
			t.Errorf("%s: %s@%s: %v", where, path, v, err)
		}
	}
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := filepath.Glob(filepath.Join(repo, "cmd", "zklock", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(append([]string{filepath.Join(repo, "README.md"), filepath.Join(repo, "CHANGELOG.md")}, docs...), cmds...) {
		forLines(t, p, func(n int, line string) {
			for _, m := range installLine.FindAllStringSubmatch(line, -1) {
				check(fmt.Sprintf("%s:%d", rel(repo, p), n), m[1], m[2])
			}
		})
	}
	for _, m := range mods {
		forLines(t, filepath.Join(repo, m), func(n int, line string) {
			if s := requireLine.FindStringSubmatch(line); s != nil {
				check(fmt.Sprintf("%s:%d", m, n), s[1], s[2])
			}
		})
	}
	if checked < len(mods) {
		t.Fatalf("%d versions checked in %d go.mod files and the docs: the parse is broken", checked, len(mods))
	}
	t.Logf("%d versions checked", checked)
}

// moduleDir returns the directory of the module that holds the package
// (or is the module) at path: the deepest module directory above it.
func moduleDir(modDirs []string, path string) string {
	dir := strings.TrimPrefix(strings.TrimPrefix(path, "github.com/zklock/zklock"), "/")
	best := ""
	for _, m := range modDirs {
		if m != "" && (dir == m || strings.HasPrefix(dir, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	return best
}

// resolves says why version v of the module in directory dir ("" for the
// root) cannot be fetched from the repository g reads, or nil.
func resolves(g func(...string) string, tags map[string]bool, dir, v string) error {
	if v == "latest" {
		return nil
	}
	tag := v
	if dir != "" {
		tag = dir + "/" + v // a module in a subdirectory is tagged with its path
	}
	if tags[tag] {
		return nil
	}
	m := pseudo.FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("no tag %s in this repository, and not a pseudo-version", tag)
	}
	stamp, commit := m[1], m[2]
	full := g("rev-parse", "--verify", "--quiet", commit+"^{commit}")
	if full == "" || g("merge-base", full, "HEAD") != full {
		return fmt.Errorf("commit %s is not in the history of HEAD", commit)
	}
	gomod := "go.mod"
	if dir != "" {
		gomod = dir + "/go.mod"
	}
	if g("cat-file", "-t", commit+":"+gomod) != "blob" {
		return fmt.Errorf("commit %s has no %s", commit, gomod)
	}
	secs := g("show", "-s", "--format=%ct", commit)
	var unix int64
	if _, err := fmt.Sscan(secs, &unix); err != nil {
		return fmt.Errorf("commit %s: time %q: %v", commit, secs, err)
	}
	if want := time.Unix(unix, 0).UTC().Format("20060102150405"); stamp != want {
		return fmt.Errorf("time %s, but commit %s was made at %s UTC", stamp, commit, want)
	}
	return nil
}

// gitIn returns a function that runs git in repo and returns its trimmed
// output, "" when git fails (an object that does not exist).
func gitIn(t *testing.T, repo string) func(args ...string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		t.Fatalf("%s is not a git checkout (%v): the versions are checked against its history", repo, err)
	}
	return func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
}

func forLines(t *testing.T, path string, f func(n int, line string)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		f(i+1, line)
	}
}

func rel(repo, p string) string {
	r, err := filepath.Rel(repo, p)
	if err != nil {
		return p
	}
	return r
}
