package zklock_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	gotoken "go/token"
	"os"
	"strings"
	"testing"
)

// TestEveryExportedNameIsDocumented keeps `go doc` complete for the public
// packages: every exported type, function, method, constant and variable
// has a doc comment (grouped constants and variables may share one).
func TestEveryExportedNameIsDocumented(t *testing.T) {
	for _, dir := range []string{".", "zktest"} {
		fset := gotoken.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			d := doc.New(p, "./"+dir, 0)
			if d.Doc == "" {
				t.Errorf("%s: no package comment", dir)
			}
			for _, f := range d.Funcs {
				undocumented(t, dir, f.Name, f.Doc)
			}
			for _, v := range append(d.Consts, d.Vars...) {
				undocumented(t, dir, strings.Join(v.Names, ","), v.Doc+specDocs(v.Decl))
			}
			for _, ty := range d.Types {
				undocumented(t, dir, ty.Name, ty.Doc)
				for _, f := range append(ty.Funcs, ty.Methods...) {
					undocumented(t, dir, ty.Name+"."+f.Name, f.Doc)
				}
				for _, v := range append(ty.Consts, ty.Vars...) {
					undocumented(t, dir, strings.Join(v.Names, ","), v.Doc+specDocs(v.Decl))
				}
			}
		}
	}
}

func undocumented(t *testing.T, dir, name, docText string) {
	t.Helper()
	if ast.IsExported(strings.TrimPrefix(name, "*")) && strings.TrimSpace(docText) == "" {
		t.Errorf("%s: %s has no doc comment", dir, name)
	}
}

// specDocs gathers the per-name comments inside a grouped declaration.
func specDocs(decl *ast.GenDecl) string {
	var b strings.Builder
	for _, s := range decl.Specs {
		if vs, ok := s.(*ast.ValueSpec); ok && vs.Doc != nil {
			b.WriteString(vs.Doc.Text())
		}
	}
	return b.String()
}
