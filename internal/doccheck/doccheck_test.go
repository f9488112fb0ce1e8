package doccheck

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// snippet is one ```go block: where it is and its text.
type snippet struct {
	file string
	line int // of the opening fence
	code string
}

// extract returns the ```go blocks of a Markdown file.
func extract(path string) ([]snippet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []snippet
	var cur *snippet
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &snippet{file: path, line: n}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: unclosed ```go block", path, cur.line)
	}
	return out, sc.Err()
}

// fragmentHead is the file around a fragment: the fragment's own imports
// go at %s. The wrapper's ctx and s need context and zklock, imported
// under names no snippet uses, so that a fragment compiles only with the
// imports it declares, as when pasted into a file of one's own.
const fragmentHead = `package main

import (
	doccheckContext "context"

	doccheckZklock "github.com/zklock/zklock"
)

%s

func main() { _ = fragment }

func fragment(ctx doccheckContext.Context, s *doccheckZklock.Session) error {
`

// program returns the snippet as a main package: a fragment's leading
// import declarations go after the file's own.
func (sn snippet) program() string { return sn.programWith(fragmentHead) }

// programWith is program with head as the file around a fragment.
func (sn snippet) programWith(head string) string {
	if strings.HasPrefix(strings.TrimSpace(sn.code), "package main") {
		return sn.code
	}
	lines := strings.Split(sn.code, "\n")
	var imports []string
	for len(lines) > 0 && strings.HasPrefix(lines[0], "import ") {
		imports = append(imports, lines[0])
		open := strings.HasSuffix(strings.TrimSpace(lines[0]), "(")
		lines = lines[1:]
		for open && len(lines) > 0 {
			imports = append(imports, lines[0])
			open = strings.TrimSpace(lines[0]) != ")"
			lines = lines[1:]
		}
	}
	head = fmt.Sprintf(head, strings.Join(imports, "\n"))
	body := strings.Join(lines, "\n")
	if rest := strings.TrimSpace(body); strings.HasPrefix(rest, "func ") || strings.HasPrefix(rest, "type ") {
		// Declarations (a test function, a type): they stay at the top level.
		return head + "\treturn nil\n}\n\n" + body
	}
	return head + body + "\treturn nil\n}\n"
}

// TestSnippetsCompile builds every Go snippet of README.md and docs/*.md
// (see the package doc for fragments) in a module that replaces zklock
// with this repository.
func TestSnippetsCompile(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var all []snippet
	for _, p := range append([]string{filepath.Join(repo, "README.md")}, docs...) {
		sns, err := extract(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sns...)
	}
	if len(all) == 0 {
		t.Fatal("no Go snippet found: the extraction is broken")
	}
	dir := snippetModule(t, repo)
	where := map[string]snippet{}
	for i, sn := range all {
		name := fmt.Sprintf("s%03d", i)
		where[name] = sn
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "main.go"), []byte(sn.program()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", os.DevNull, "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Logf("%d snippets build", len(all))
		return
	}
	// Name the Markdown file and line of each failing snippet.
	for _, line := range strings.Split(string(out), "\n") {
		for name, sn := range where {
			if strings.Contains(line, name+"/") || strings.Contains(line, "snippets/"+name) {
				rel, _ := filepath.Rel(repo, sn.file)
				line = fmt.Sprintf("%s:%d (snippet): %s", rel, sn.line, line)
				break
			}
		}
		if strings.TrimSpace(line) != "" {
			t.Error(line)
		}
	}
	t.Fatalf("go build: %v", err)
}

// snippetModule writes, in a new directory, the module snippets are built
// in, and returns the directory.
func snippetModule(t *testing.T, repo string) string {
	t.Helper()
	dir := t.TempDir()
	// The snippets' module is zklock's go.mod under another name, requiring
	// zklock from the checkout: its requirements (indirect ones included)
	// keep the module graph as pruned as zklock's own, so the build needs
	// no module that zklock's build does not (on a fresh machine it may
	// download them first, as zklock's own build does), and any
	// replacement holds with its path made absolute.
	mod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(mod), "\n") {
		switch {
		case strings.HasPrefix(l, "module "):
			l = "module snippets"
		case strings.Contains(l, "=> ./"):
			l = strings.Replace(l, "=> ./", "=> "+repo+"/", 1)
		}
		lines = append(lines, l)
	}
	gomod := strings.Join(lines, "\n") + fmt.Sprintf("\nrequire github.com/zklock/zklock v0.0.0\n\nreplace github.com/zklock/zklock => %s\n", repo)
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The adapters are modules of their own (so that the root's importers
	// do not get their dependencies): snippets use them from the checkout
	// too, with the sums of their dependencies.
	for _, sub := range []string{"metrics/prometheus", "metrics/otel", "zktest/docker", "fence"} {
		gomod += fmt.Sprintf("require github.com/zklock/zklock/%s v0.0.0\nreplace github.com/zklock/zklock/%s => %s/%s\n", sub, sub, repo, sub)
		subSum, err := os.ReadFile(filepath.Join(repo, sub, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, subSum...)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
