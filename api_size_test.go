package zklock_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"strings"
	"testing"
)

// apiCeiling is the most exported names and methods the root package may
// have (issue 48: a newcomer reads go doc of the root; the goal is 120).
// It counts 120 without the six methods of the Metrics interface, which
// an implementer writes; with them, 126. Lower it when the count falls;
// raising it takes a reason in the commit.
const apiCeiling = 126

// TestAPISize counts the root package's API as go doc shows it: every
// exported const and var name, function (constructors included), type,
// and method of an exported type, an exported interface's methods
// included; it fails when the count passes
// apiCeiling.
func TestAPISize(t *testing.T) {
	names := rootAPI(t)
	if len(names) > apiCeiling {
		t.Errorf("the root package exports %d names and methods, over the ceiling of %d:\n%s",
			len(names), apiCeiling, strings.Join(names, "\n"))
	}
	if len(names) < 40 {
		t.Fatalf("counted only %d names: the count is broken", len(names))
	}
	t.Logf("%d exported names and methods (ceiling %d)", len(names), apiCeiling)
}

// rootAPI lists the root package's exported names and methods.
func rootAPI(t *testing.T) []string {
	t.Helper()
	fset := gotoken.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, ".", notTest, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := pkgs["zklock"]
	if !ok {
		t.Fatalf("no package zklock among %v", pkgs)
	}
	d := doc.New(p, "github.com/zklock/zklock", 0)
	var out []string
	values := func(vs []*doc.Value, kind string) {
		for _, v := range vs {
			for _, s := range v.Decl.Specs {
				for _, id := range s.(*ast.ValueSpec).Names {
					if id.IsExported() {
						out = append(out, kind+" "+id.Name)
					}
				}
			}
		}
	}
	values(d.Consts, "const")
	values(d.Vars, "var")
	for _, f := range d.Funcs {
		out = append(out, "func "+f.Name)
	}
	for _, ty := range d.Types {
		out = append(out, "type "+ty.Name)
		values(ty.Consts, "const")
		values(ty.Vars, "var")
		for _, f := range ty.Funcs {
			out = append(out, "func "+f.Name)
		}
		for _, m := range ty.Methods {
			out = append(out, "method "+ty.Name+"."+m.Name)
		}
		// An exported interface's methods are names go doc shows and an
		// implementer must write (Metrics'): they count too.
		for _, sp := range ty.Decl.Specs {
			it, ok := sp.(*ast.TypeSpec).Type.(*ast.InterfaceType)
			if !ok {
				continue
			}
			for _, f := range it.Methods.List {
				for _, n := range f.Names {
					if n.IsExported() {
						out = append(out, "method "+ty.Name+"."+n.Name)
					}
				}
			}
		}
	}
	return out
}
