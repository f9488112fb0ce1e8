package zklock_test

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/examplecheck"
)

// Every exported type has a testable example that runs (with an Output
// comment), and so do the main flows a newcomer looks for.
func TestEveryTypeHasAnExample(t *testing.T) {
	t.Parallel()
	missing, err := examplecheck.Missing(".",
		"NewSession", "Session.Subscribe", "Mutex.Lock", "Mutex.TryLock", "Mutex.Locker", "RWMutex.RLock",
		"RWMutex.RLocker", "Election.Campaign", "Election.Observe", "Election.Run", "Revoke", "Break", "WatchLock",
		"WithMaxHold", "WithCohort", "WithMetrics", "NewMultiLock")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("no example: %s", m)
	}
}

// Every example can be copied as it is: it calls no unexported function
// of the test package (a helper a reader would not have); it takes its
// servers from ZK_SERVERS, as the README program does.
func TestExamplesAreCopyable(t *testing.T) {
	t.Parallel()
	fset := gotoken.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := pkgs["zklock_test"].Files
	helpers := map[string]bool{} // the package's own unexported functions
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && !ast.IsExported(fd.Name.Name) {
				helpers[fd.Name.Name] = true
			}
		}
	}
	examples := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Example") {
				continue
			}
			examples++
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if id, ok := call.Fun.(*ast.Ident); ok && helpers[id.Name] {
						t.Errorf("%s: %s calls %s, a helper of the tests", fset.Position(call.Pos()), fd.Name.Name, id.Name)
					}
				}
				return true
			})
		}
	}
	if examples == 0 {
		t.Fatal("no example found: the parse is broken")
	}
}
