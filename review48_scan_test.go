package zklock_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	gotoken "go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// publicLeaks type-checks the package in dir (import path path) from
// source and lists every place its exported API, as an importer meets it,
// names a type an importer cannot name: one of an internal package, or an
// unexported named type.
func publicLeaks(t *testing.T, modDir, pattern string) []string {
	t.Helper()
	goList := func(args ...string) []string {
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = modDir
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go list %v in %s: %v\n%s", args, modDir, err, ee.Stderr)
			}
			t.Fatalf("go list %v in %s: %v", args, modDir, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	export := map[string]string{}
	for _, l := range goList("-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", pattern) {
		k, v, _ := strings.Cut(l, "=")
		export[k] = v
	}
	// The package's own files as the build selects them (build tags).
	info := goList("-f", "{{.ImportPath}}\n{{.Dir}}\n{{range .GoFiles}}{{.}}\n{{end}}", pattern)
	path, dir := info[0], info[1]
	fset := gotoken.NewFileSet()
	var files []*ast.File
	for _, name := range info[2:] {
		if name == "" {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	lookup := func(p string) (io.ReadCloser, error) {
		f, ok := export[p]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check(path, fset, files, nil)
	if err != nil {
		t.Fatalf("type-check %s: %v", path, err)
	}
	seen := map[string]bool{}
	var out []string
	var walk func(where string, ty types.Type, depth int)
	visited := map[types.Type]bool{}
	walk = func(where string, ty types.Type, depth int) {
		if depth > 6 {
			return
		}
		switch x := ty.(type) {
		case *types.Named:
			o := x.Obj()
			if o.Pkg() != nil && (strings.Contains(o.Pkg().Path(), "/internal/") || !o.Exported()) {
				k := where + ": " + o.Pkg().Path() + "." + o.Name()
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
			for i := 0; i < x.TypeArgs().Len(); i++ {
				walk(where, x.TypeArgs().At(i), depth+1)
			}
			// An exported type of this package is checked on its own.
		case *types.Pointer:
			walk(where, x.Elem(), depth+1)
		case *types.Slice:
			walk(where, x.Elem(), depth+1)
		case *types.Array:
			walk(where, x.Elem(), depth+1)
		case *types.Map:
			walk(where, x.Key(), depth+1)
			walk(where, x.Elem(), depth+1)
		case *types.Chan:
			walk(where, x.Elem(), depth+1)
		case *types.Signature:
			for i := 0; i < x.Params().Len(); i++ {
				walk(where, x.Params().At(i).Type(), depth+1)
			}
			for i := 0; i < x.Results().Len(); i++ {
				walk(where, x.Results().At(i).Type(), depth+1)
			}
		case *types.Struct:
			if visited[x] {
				return
			}
			visited[x] = true
			for i := 0; i < x.NumFields(); i++ {
				f := x.Field(i)
				if f.Exported() {
					walk(where+"."+f.Name(), f.Type(), depth+1)
				}
			}
		case *types.Interface:
			for i := 0; i < x.NumMethods(); i++ {
				m := x.Method(i)
				if m.Exported() {
					walk(where+"."+m.Name(), m.Type(), depth+1)
				}
			}
		}
	}
	sc := pkg.Scope()
	for _, name := range sc.Names() {
		o := sc.Lookup(name)
		if !o.Exported() {
			continue
		}
		where := pkg.Name() + "." + name
		switch o := o.(type) {
		case *types.TypeName:
			under := o.Type().Underlying()
			walk(where, under, 0)
			if it, ok := under.(*types.Interface); ok {
				for i := 0; i < it.NumMethods(); i++ {
					if !it.Method(i).Exported() {
						out = append(out, where+": interface with unexported method "+it.Method(i).Name())
						break
					}
				}
			}
			ms := types.NewMethodSet(types.NewPointer(o.Type()))
			for i := 0; i < ms.Len(); i++ {
				m := ms.At(i).Obj()
				if m.Exported() {
					walk(where+"."+m.Name(), m.Type(), 0)
				}
			}
		default:
			walk(where, o.Type(), 0)
		}
	}
	sort.Strings(out)
	return out
}

// TestReviewBreak_NoInternalTypesInAPI: type-checked as an importer
// sees them (export data, build tags applied), the exported API of every
// public package of every module (root, zk, zktest, interop, fence,
// metrics/otel, metrics/prometheus) names no type of an internal package
// and no unexported type, in any signature, exported field, interface
// method or promoted method, save the two designs go doc states: an
// option func type over an unexported options struct (built only by the
// package's With... funcs), and a closed interface (Part, zk.Op: "only
// zklock's handles are Parts", "The interface is closed").
func TestReviewBreak_NoInternalTypesInAPI(t *testing.T) {
	t.Parallel()
	intended := map[string]bool{
		"zklock.Option: github.com/zklock/zklock.primitiveOptions":               true,
		"zklock.SessionOption: github.com/zklock/zklock.sessionOptions":          true,
		"zklock.Part: interface with unexported method part":                     true,
		"zk.Op: interface with unexported method clientOp":                       true,
		"zktest.Option: github.com/zklock/zklock/zktest.options":                 true,
		"fence.HandlerOption: github.com/zklock/zklock/fence.handlerOptions":     true,
		"fence.Option: github.com/zklock/zklock/fence.options":                   true,
		"otel.Option: github.com/zklock/zklock/metrics/otel.options":             true,
		"prometheus.Option: github.com/zklock/zklock/metrics/prometheus.options": true,
	}
	found := map[string]bool{}
	for _, p := range [][2]string{{".", "."}, {".", "./zk"}, {".", "./zktest"}, {".", "./interop"},
		{"fence", "."}, {"metrics/otel", "."}, {"metrics/prometheus", "."}} {
		for _, l := range publicLeaks(t, p[0], p[1]) {
			found[l] = true
			if !intended[l] {
				t.Errorf("%s (module %s): %s", p[1], p[0], l)
			}
		}
	}
	// The scan must see the intended ones: a scan that finds nothing is broken.
	for l := range intended {
		if !found[l] {
			t.Errorf("the scan no longer reports %q: fix the scan or this list", l)
		}
	}
}
