// Package examplecheck finds the exported types, and the named functions
// and methods, of a package that have no testable example, and the
// examples that are never run (the tests of zklock and zktest fail on any,
// so that pkg.go.dev shows an example for every type), and the examples
// that are not standalone (zklock's tests fail on any: each runs as
// copied).
package examplecheck

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// Missing parses the Go package in dir, its test files included, and
// returns, sorted, every exported type that has no example (of the type,
// of a function returning it, or of one of its methods), every name of
// want ("Func" or "Type.Method") that has no example of its own, every
// example without an "Output:" comment, which go test would compile but
// never run.
func Missing(dir string, want ...string) ([]string, error) {
	fset, files, _, err := parse(dir)
	if err != nil {
		return nil, err
	}
	p, err := doc.NewFromFiles(fset, files, "example.com/"+filepath.Base(dir))
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	var missing []string
	check := func(what string, exs []*doc.Example) {
		for _, e := range exs {
			if e.Output == "" && !e.EmptyOutput {
				missing = append(missing, fmt.Sprintf("Example%s (for %s) has no Output comment: it is never run", e.Name, what))
			}
		}
	}
	for _, f := range p.Funcs {
		has[f.Name] = len(f.Examples) > 0
		check(f.Name, f.Examples)
	}
	for _, t := range p.Types {
		n := len(t.Examples)
		check(t.Name, t.Examples)
		for _, f := range t.Funcs {
			n += len(f.Examples)
			has[f.Name] = len(f.Examples) > 0
			check(f.Name, f.Examples)
		}
		for _, m := range t.Methods {
			n += len(m.Examples)
			has[t.Name+"."+m.Name] = len(m.Examples) > 0
			check(t.Name+"."+m.Name, m.Examples)
		}
		if n == 0 {
			missing = append(missing, "type "+t.Name)
		}
	}
	for _, w := range want {
		if !has[w] {
			missing = append(missing, w)
		}
	}
	slices.Sort(missing)
	return missing, nil
}

// WithoutOwnExample parses the Go package in dir, its test files
// included, and returns, sorted, every exported type with no example of
// its own: neither Example<Type> nor Example<Type>_<Method> for one of its
// methods. A constructor's example (ExampleNewT) does not count here, as
// it does for Missing: a reader who looks for the type's example by its
// name, or runs go test -run ExampleT, would find none.
func WithoutOwnExample(dir string) ([]string, error) {
	fset, files, _, err := parse(dir)
	if err != nil {
		return nil, err
	}
	p, err := doc.NewFromFiles(fset, files, "example.com/"+filepath.Base(dir))
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, t := range p.Types {
		n := len(t.Examples)
		for _, m := range t.Methods {
			n += len(m.Examples)
		}
		if n == 0 {
			missing = append(missing, "type "+t.Name)
		}
	}
	slices.Sort(missing)
	return missing, nil
}

// NotStandalone parses the Go package in dir, its test files included, and
// returns, sorted, what each example that is not standalone uses: a type,
// function, variable or constant of the test files declared outside the
// example (a whole-file example, one example in a file with its helpers
// and no test, may use its own file's), which a reader copying what
// pkg.go.dev shows would not have.
func NotStandalone(dir string) ([]string, error) {
	fset, files, name, err := parse(dir)
	if err != nil {
		return nil, err
	}
	out := notStandalone(fset, files, name)
	slices.Sort(out)
	return out, nil
}

// parse parses the Go files of dir and names the package under test.
func parse(dir string) (*token.FileSet, []*ast.File, string, error) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, "", err
	}
	var files []*ast.File
	var name string
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return nil, nil, "", err
		}
		files = append(files, f)
		if n := f.Name.Name; !strings.HasSuffix(n, "_test") {
			name = n
		}
	}
	if name == "" {
		return nil, nil, "", fmt.Errorf("examplecheck: no package in %s", dir)
	}
	return fset, files, name, nil
}
