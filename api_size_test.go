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

// The root package's API, counted two ways, neither of which may grow
// (issue 48: a newcomer reads go doc of the root; its goal is 120).
//
// apiGoal bounds the count as issue 48 made its own (248 names before the
// move): every exported const and var name, function (constructors
// included), type, and method go doc lists as a func of an exported type.
// On a1f70de, before the move, this count gives 251.
//
// apiCeiling bounds the same count with an exported interface's methods
// added (the six of Metrics, which an implementer writes and go doc shows
// inside the type): 126. Lower either when the count falls; raising one
// takes a reason in the commit.
const (
	apiGoal    = 120
	apiCeiling = 126
)

// TestAPISize fails when either count of the root package's API passes
// its bound (see apiGoal).
func TestAPISize(t *testing.T) {
	names := rootAPI(t)
	var listed []string
	for _, n := range names {
		if !strings.HasPrefix(n, "interface method ") {
			listed = append(listed, n)
		}
	}
	if len(listed) > apiGoal {
		t.Errorf("the root package exports %d names and methods, over issue 48's goal of %d:\n%s",
			len(listed), apiGoal, strings.Join(listed, "\n"))
	}
	if len(names) > apiCeiling {
		t.Errorf("the root package exports %d names and methods with its interfaces' methods, over the ceiling of %d:\n%s",
			len(names), apiCeiling, strings.Join(names, "\n"))
	}
	if len(listed) < 40 || len(names) == len(listed) {
		t.Fatalf("counted only %d names (%d with interface methods): the count is broken", len(listed), len(names))
	}
	t.Logf("%d exported names and methods (goal %d); %d with interface methods (ceiling %d)", len(listed), apiGoal, len(names), apiCeiling)
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
						out = append(out, "interface method "+ty.Name+"."+n.Name)
					}
				}
			}
		}
	}
	return out
}
