package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// counts is a coverage snapshot: a block ("file:start.col,end.col") and its
// count.
type counts map[string]int

// readCounts converts a coverage directory to the text format with
// go tool covdata and reads it.
func readCounts(dir string) (counts, error) {
	out := filepath.Join(dir, "profile.txt")
	cmd := exec.Command("go", "tool", "covdata", "textfmt", "-i="+dir, "-o="+out)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go tool covdata: %w", err)
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := counts{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") {
			continue
		}
		// file:12.3,15.2 statements count
		fields := strings.Fields(line)
		if len(fields) != 3 {
			continue
		}
		n, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("profile line %q: %w", line, err)
		}
		c[fields[0]] += n
	}
	return c, sc.Err()
}

// fn is a function declaration of the measured code.
type fn struct {
	file       string // import path of the package + "/" + file name
	name       string // Recv.Name or Name
	start, end int    // lines
}

// funcIndex maps blocks to the functions around them, and knows where the
// go statements are.
type funcIndex struct {
	funcs map[string][]fn   // by file
	gos   map[string][]int  // lines of go statements, by file
	names map[string]string // file -> path shown
}

// parseFuncs reads the module's non-test Go files under root.
func parseFuncs(root, module string) (*funcIndex, error) {
	ix := &funcIndex{funcs: map[string][]fn{}, gos: map[string][]int{}, names: map[string]string{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		key := module + filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ix.names[key] = filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			d, ok := decl.(*ast.FuncDecl)
			if !ok || d.Body == nil {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				name = recvName(d.Recv.List[0].Type) + "." + name
			}
			ix.funcs[key] = append(ix.funcs[key], fn{file: key, name: name,
				start: fset.Position(d.Pos()).Line, end: fset.Position(d.End()).Line})
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				ix.gos[key] = append(ix.gos[key], fset.Position(g.Pos()).Line)
			}
			return true
		})
		return nil
	})
	return ix, err
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// path is what ran between two snapshots.
type path struct {
	funcs map[string]bool // "file: name"
	gos   map[string]bool // "file:line" of go statements reached
}

// ran returns the functions whose blocks counted up between before and
// after, and the go statements in blocks that did.
func (ix *funcIndex) ran(before, after counts) *path {
	p := &path{funcs: map[string]bool{}, gos: map[string]bool{}}
	for block, n := range after {
		if n <= before[block] {
			continue
		}
		file, rest, ok := strings.Cut(block, ":")
		if !ok {
			continue
		}
		startLine, endLine := blockLines(rest)
		for _, f := range ix.funcs[file] {
			if startLine >= f.start && startLine <= f.end {
				p.funcs[ix.names[file]+": "+f.name] = true
			}
		}
		for _, l := range ix.gos[file] {
			if l >= startLine && l <= endLine {
				p.gos[fmt.Sprintf("%s:%d", ix.names[file], l)] = true
			}
		}
	}
	return p
}

// blockLines parses "12.3,15.2".
func blockLines(s string) (int, int) {
	a, b, _ := strings.Cut(s, ",")
	al, _, _ := strings.Cut(a, ".")
	bl, _, _ := strings.Cut(b, ".")
	x, _ := strconv.Atoi(al)
	y, _ := strconv.Atoi(bl)
	return x, y
}

// intersect keeps what p and q (nil: everything) both ran.
func (p *path) intersect(q *path) *path {
	if q == nil {
		return p
	}
	out := &path{funcs: map[string]bool{}, gos: map[string]bool{}}
	for k := range p.funcs {
		if q.funcs[k] {
			out.funcs[k] = true
		}
	}
	for k := range p.gos {
		if q.gos[k] {
			out.gos[k] = true
		}
	}
	return out
}

func (p *path) print(w io.Writer, cancellable bool, below []string) {
	isBelow := func(k string) bool {
		return slices.ContainsFunc(below, func(b string) bool { return b != "" && strings.HasPrefix(k, b) })
	}
	files := map[string]int{}
	wireFiles, wireFuncs := map[string]bool{}, 0
	for k := range p.funcs {
		file, _, _ := strings.Cut(k, ": ")
		if isBelow(k) {
			wireFiles[file] = true
			wireFuncs++
			continue
		}
		files[file]++
	}
	ctx := "context.Background()"
	if cancellable {
		ctx = "a cancellable ctx"
	}
	fmt.Fprintf(w, "uncontended Mutex.Lock(%s) on an existing path: %d files, %d functions above the wire layer; %d go statements reached; the wire layer (%s): %d files, %d functions\n",
		ctx, len(files), len(p.funcs)-wireFuncs, len(p.gos), strings.Join(below, " "), len(wireFiles), wireFuncs)
	for _, f := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(w, "  %s (%d)\n", f, files[f])
	}
	for _, k := range slices.Sorted(maps.Keys(p.funcs)) {
		if !isBelow(k) {
			fmt.Fprintf(w, "    %s\n", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.gos)) {
		fmt.Fprintf(w, "  go statement: %s\n", k)
	}
}
