package examplecheck

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/token"
	"path/filepath"
	"strings"
)

// helpers returns the top-level names the test files declare, each with
// its file (examples, tests, benchmarks and fuzz targets aside): split by
// package, those of the package under test's own test files (export_test.go:
// reached as pkg.Name) and those of the external test package.
func helpers(fset *token.FileSet, files []*ast.File, pkg string) (own, ext map[string]string) {
	own, ext = map[string]string{}, map[string]string{}
	for _, f := range files {
		file := fset.File(f.Pos()).Name()
		if !strings.HasSuffix(file, "_test.go") {
			continue
		}
		into := ext
		if f.Name.Name == pkg {
			into = own
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				n := d.Name.Name
				if d.Recv == nil && !isTestFunc(n) {
					into[n] = file
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						into[sp.Name.Name] = file
					case *ast.ValueSpec:
						for _, id := range sp.Names {
							if id.Name != "_" {
								into[id.Name] = file
							}
						}
					}
				}
			}
		}
	}
	return own, ext
}

func isTestFunc(n string) bool {
	for _, p := range []string{"Example", "Test", "Benchmark", "Fuzz"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// notStandalone returns, for every example that uses a name the test files
// declare outside it, what it uses: the reader of the example (go test's
// listing, pkg.go.dev) sees its body alone, or, for a whole-file example
// (one example in a file with its helpers and no test), that file alone.
func notStandalone(fset *token.FileSet, files []*ast.File, pkg string) []string {
	own, ext := helpers(fset, files, pkg)
	var out []string
	for _, e := range doc.Examples(files...) {
		region := e.Code
		file := "" // a whole-file example's file: its declarations are shown with it
		if f, ok := e.Code.(*ast.File); ok {
			file = fset.File(f.Pos()).Name()
		}
		seen := map[string]bool{}
		report := func(name, where string) {
			if !seen[name] {
				seen[name] = true
				out = append(out, fmt.Sprintf("Example%s uses %s of %s, declared outside it: not standalone", e.Name, name, filepath.Base(where)))
			}
		}
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				// pkg.Name where Name comes from the package's own test files.
				if x, ok := n.X.(*ast.Ident); ok && x.Name == pkg && x.Obj == nil && own[n.Sel.Name] != "" {
					report(pkg+"."+n.Sel.Name, own[n.Sel.Name])
				}
				ast.Inspect(n.X, visit)
				return false // Sel names a field, a method or a package's member
			case *ast.KeyValueExpr:
				if _, ok := n.Key.(*ast.Ident); ok {
					ast.Inspect(n.Value, visit)
					return false // Key names a struct literal's field
				}
			case *ast.Ident:
				where := ext[n.Name]
				if where == "" || where == file || declaredIn(n, region) {
					return true
				}
				report(n.Name, where)
			}
			return true
		}
		ast.Inspect(region, visit)
	}
	return out
}

// declaredIn reports whether the parser resolved id to a declaration
// inside region.
func declaredIn(id *ast.Ident, region ast.Node) bool {
	if id.Obj == nil {
		return false
	}
	d, ok := id.Obj.Decl.(ast.Node)
	return ok && d.Pos() >= region.Pos() && d.End() <= region.End()
}
