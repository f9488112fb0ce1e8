package zklock_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryExportedNameIsDocumented keeps `go doc` complete for the public
// packages: every exported type, function, method, constant and variable
// has a doc comment (grouped constants and variables may share one).
func TestEveryExportedNameIsDocumented(t *testing.T) {
	for _, dir := range []string{".", "zktest"} {
		d := parsePackage(t, dir)
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

// parsePackage reads the documentation of the package in dir, test files
// excluded.
func parsePackage(t *testing.T, dir string) *doc.Package {
	t.Helper()
	fset := gotoken.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, "github.com/zklock/zklock/"+dir)
	require.NoError(t, err)
	return d
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
