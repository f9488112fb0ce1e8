package zklock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/format"
	"go/importer"
	"go/parser"
	gotoken "go/token"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Issue 48, second review (r48b): attacks on the public API as a careless
// caller meets it. Attacks that held live here; the one that broke a
// claim (zero and nil handles panicked) is zero_handles_test.go's now.

// callNoPanic runs f, turning a panic into an error naming it, so that one
// bad call does not hide the others.
func callNoPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return f()
}

// badCall is one call with bad input and the sentinel the docs promise.
type badCall struct {
	name string
	want error
	call func() error
}

// runBadCalls checks that each call returns its sentinel (through a
// caller's wrapping) and does not panic.
func runBadCalls(t *testing.T, cs []badCall) {
	t.Helper()
	for _, c := range cs {
		err := callNoPanic(c.call)
		if !errors.Is(fmt.Errorf("app: %w", err), c.want) {
			t.Errorf("%s: %v, want errors.Is %v", c.name, err, c.want)
		}
	}
}

// TestReview48b_BadInputNoPanic: the package functions and handle methods
// errors.go names for ErrInvalidArgument ("a nil Session", "a path
// ZooKeeper would refuse", "every blocking method for a nil context")
// return it for nil ctx, nil Session, an empty path, rather than panic.
func TestReview48b_BadInputNoPanic(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	var nilCtx context.Context
	p := lockPath(t, "x")
	inv := zklock.ErrInvalidArgument
	var cs []badCall
	for _, path := range []string{"", "rel", p + "/", "/a//b"} {
		path := path
		cs = append(cs,
			badCall{fmt.Sprintf("Break(%q)", path), inv, func() error { _, err := zklock.Break(ctx, s, path, true); return err }},
			badCall{fmt.Sprintf("Contenders(%q)", path), inv, func() error { _, err := zklock.Contenders(ctx, s, path); return err }},
			badCall{fmt.Sprintf("Revoke(%q)", path), inv, func() error { _, err := zklock.Revoke(ctx, s, path); return err }},
			badCall{fmt.Sprintf("WatchLock(%q)", path), inv, func() error { _, err := zklock.WatchLock(ctx, s, path); return err }},
			badCall{fmt.Sprintf("NewMutex(%q)", path), inv, func() error { _, err := zklock.NewMutex(s, path); return err }},
			badCall{fmt.Sprintf("NewRWMutex(%q)", path), inv, func() error { _, err := zklock.NewRWMutex(s, path); return err }},
			badCall{fmt.Sprintf("NewReentrantMutex(%q)", path), inv, func() error { _, err := zklock.NewReentrantMutex(s, path); return err }},
			badCall{fmt.Sprintf("NewSemaphore(%q)", path), inv, func() error { _, err := zklock.NewSemaphore(s, path, 1); return err }},
			badCall{fmt.Sprintf("NewElection(%q)", path), inv, func() error { _, err := zklock.NewElection(s, path); return err }},
		)
	}
	cs = append(cs,
		badCall{"Break(nil ctx)", inv, func() error { _, err := zklock.Break(nilCtx, s, p, true); return err }},
		badCall{"Break(nil Session)", inv, func() error { _, err := zklock.Break(ctx, nil, p, true); return err }},
		badCall{"Contenders(nil ctx)", inv, func() error { _, err := zklock.Contenders(nilCtx, s, p); return err }},
		badCall{"Contenders(nil Session)", inv, func() error { _, err := zklock.Contenders(ctx, nil, p); return err }},
		badCall{"Revoke(nil ctx)", inv, func() error { _, err := zklock.Revoke(nilCtx, s, p); return err }},
		badCall{"Revoke(nil Session)", inv, func() error { _, err := zklock.Revoke(ctx, nil, p); return err }},
		badCall{"WatchLock(nil ctx)", inv, func() error { _, err := zklock.WatchLock(nilCtx, s, p); return err }},
		badCall{"WatchLock(nil Session)", inv, func() error { _, err := zklock.WatchLock(ctx, nil, p); return err }},
		badCall{"NewRWMutex(nil Session)", inv, func() error { _, err := zklock.NewRWMutex(nil, p); return err }},
		badCall{"NewReentrantMutex(nil Session)", inv, func() error { _, err := zklock.NewReentrantMutex(nil, p); return err }},
		badCall{"NewSemaphore(nil Session)", inv, func() error { _, err := zklock.NewSemaphore(nil, p, 1); return err }},
		badCall{"NewElection(nil Session)", inv, func() error { _, err := zklock.NewElection(nil, p); return err }},
		badCall{"NewSession(nil ctx)", inv, func() error {
			s, err := zklock.NewSession(nilCtx, zklock.WithServers(srv.Servers()...))
			if s != nil {
				s.Close()
			}
			return err
		}},
		badCall{"NewMultiLock()", inv, func() error { _, err := zklock.NewMultiLock(); return err }},
		badCall{"NewMultiLock(nil)", inv, func() error { _, err := zklock.NewMultiLock(nil); return err }},
		badCall{"WithLogger(nil)", inv, func() error {
			s, err := zklock.NewSession(ctx, zklock.WithServers(srv.Servers()...), zklock.WithLogger(nil))
			if s != nil {
				s.Close()
			}
			return err
		}},
		badCall{"WithMaxHold(-1s)", inv, func() error { _, err := zklock.NewMutex(s, p, zklock.WithMaxHold(-time.Second)); return err }},
		badCall{"WithCohort(-1, -1s)", inv, func() error { _, err := zklock.NewMutex(s, p, zklock.WithCohort(-1, -time.Second)); return err }},
	)
	m, err := zklock.NewMutex(s, p)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
	if err != nil {
		t.Fatal(err)
	}
	sem, err := zklock.NewSemaphore(s, lockPath(t, "sem"), 2)
	if err != nil {
		t.Fatal(err)
	}
	e, err := zklock.NewElection(s, lockPath(t, "e"))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := zklock.NewMutex(s, lockPath(t, "m2"))
	if err != nil {
		t.Fatal(err)
	}
	ml, err := zklock.NewMultiLock(m2)
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs,
		badCall{"Mutex.TryLock(nil ctx)", inv, func() error { return m.TryLock(nilCtx) }},
		badCall{"Mutex.Unlock(nil ctx)", inv, func() error { return m.Unlock(nilCtx) }},
		badCall{"RWMutex.Lock(nil ctx)", inv, func() error { return rw.Lock(nilCtx) }},
		badCall{"RWMutex.RLock(nil ctx)", inv, func() error { return rw.RLock(nilCtx) }},
		badCall{"RWMutex.TryLock(nil ctx)", inv, func() error { return rw.TryLock(nilCtx) }},
		badCall{"RWMutex.TryRLock(nil ctx)", inv, func() error { return rw.TryRLock(nilCtx) }},
		badCall{"RWMutex.RUnlock(nil ctx)", inv, func() error { return rw.RUnlock(nilCtx) }},
		badCall{"RWMutex.Unlock(nil ctx)", inv, func() error { return rw.Unlock(nilCtx) }},
		badCall{"ReentrantMutex.Lock(nil ctx)", inv, func() error { return r.Lock(nilCtx) }},
		badCall{"ReentrantMutex.TryLock(nil ctx)", inv, func() error { return r.TryLock(nilCtx) }},
		badCall{"ReentrantMutex.Unlock(nil ctx)", inv, func() error { return r.Unlock(nilCtx) }},
		badCall{"Semaphore.Acquire(nil ctx)", inv, func() error { _, err := sem.Acquire(nilCtx, 1); return err }},
		badCall{"Semaphore.TryAcquire(nil ctx)", inv, func() error { _, err := sem.TryAcquire(nilCtx, 1); return err }},
		badCall{"Semaphore.Acquire(-1)", inv, func() error { _, err := sem.Acquire(ctx, -1); return err }},
		badCall{"Election.Campaign(nil ctx)", inv, func() error { _, err := e.Campaign(nilCtx, nil); return err }},
		badCall{"Election.Observe(nil ctx)", inv, func() error { _, err := e.Observe(nilCtx); return err }},
		badCall{"Election.Run(nil ctx)", inv, func() error {
			return e.Run(nilCtx, nil, func(context.Context, *zklock.Term) error { return nil })
		}},
		badCall{"Election.Resign(nil ctx)", inv, func() error { return e.Resign(nilCtx) }},
		badCall{"MultiLock.Lock(nil ctx)", inv, func() error { return ml.Lock(nilCtx) }},
		badCall{"MultiLock.Unlock(nil ctx)", inv, func() error { return ml.Unlock(nilCtx) }},
	)
	runBadCalls(t, cs)
	l, err := sem.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	runBadCalls(t, []badCall{{"Lease.Release(nil ctx)", inv, func() error { return l.Release(nilCtx) }}})
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Nothing above took a hold: the Mutex is free for a rival.
	if err := m.TryLock(ctx); err != nil {
		t.Fatalf("TryLock after the bad calls: %v", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReview48b_NilOptionsAndOps: a nil Option or SessionOption in the
// variadic list (a conditional option left unset) is a bad option value,
// ErrInvalidArgument, not a nil-func panic; Multi refuses a typed nil op
// of every Op type (not only the *CheckOp of a Guard of nothing held) and
// an empty transaction without panicking, sending nothing.
func TestReview48b_NilOptionsAndOps(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	p := lockPath(t, "x")
	inv := zklock.ErrInvalidArgument
	fresh, err := zklock.NewMutex(s, p)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Client()
	data := "/review48b-nil-ops"
	runBadCalls(t, []badCall{
		{"NewMutex(nil Option)", inv, func() error { _, err := zklock.NewMutex(s, p, nil); return err }},
		{"NewSemaphore(nil Option)", inv, func() error { _, err := zklock.NewSemaphore(s, p, 1, nil); return err }},
		{"NewSession(nil SessionOption)", inv, func() error {
			s, err := zklock.NewSession(ctx, zklock.WithServers(srv.Servers()...), nil)
			if s != nil {
				s.Close()
			}
			return err
		}},
		{"Multi(nil Guard, create)", inv, func() error {
			_, err := c.Multi(ctx, fresh.Guard(), &zk.CreateOp{Path: data, Mode: zk.ModePersistent})
			return err
		}},
		{"Multi(nil *SetDataOp)", inv, func() error { _, err := c.Multi(ctx, (*zk.SetDataOp)(nil)); return err }},
		{"Multi(nil *CreateOp)", inv, func() error { _, err := c.Multi(ctx, (*zk.CreateOp)(nil)); return err }},
		{"Multi(nil *DeleteOp)", inv, func() error { _, err := c.Multi(ctx, (*zk.DeleteOp)(nil)); return err }},
		{"Multi(untyped nil)", inv, func() error { _, err := c.Multi(ctx, nil); return err }},
		{"Multi(create, nil *CheckOp)", inv, func() error {
			_, err := c.Multi(ctx, &zk.CreateOp{Path: data, Mode: zk.ModePersistent}, (*zk.CheckOp)(nil))
			return err
		}},
	})
	if _, ok, err := c.Exists(ctx, data); err != nil || ok {
		t.Errorf("after the refused Multis, %s exists=%v (%v): a refused transaction committed", data, ok, err)
	}
	if err := callNoPanic(func() error { _, err := c.Multi(ctx); return err }); err != nil && !errors.Is(err, inv) {
		t.Errorf("Multi of no ops: %v", err)
	}
}

// TestReview48b_NilCtxWhileHeld: a release with a nil context while the
// handle holds is ErrInvalidArgument, not a panic, and leaves the hold in
// place (a rival's TryLock is still refused; the proper release works).
func TestReview48b_NilCtxWhileHeld(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	var nilCtx context.Context
	inv := zklock.ErrInvalidArgument
	m, err := zklock.NewMutex(s, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
	if err != nil {
		t.Fatal(err)
	}
	rw, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []interface{ Lock(context.Context) error }{m, r, rw} {
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runBadCalls(t, []badCall{
		{"held Mutex.Unlock(nil ctx)", inv, func() error { return m.Unlock(nilCtx) }},
		{"held ReentrantMutex.Unlock(nil ctx)", inv, func() error { return r.Unlock(nilCtx) }},
		{"held RWMutex.Unlock(nil ctx)", inv, func() error { return rw.Unlock(nilCtx) }},
		{"held RWMutex.Downgrade(nil ctx)", inv, func() error { return rw.Downgrade(nilCtx) }},
	})
	for name, p := range map[string]string{"m": lockPath(t, "m"), "r": lockPath(t, "r")} {
		rival, err := zklock.NewMutex(s2, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := rival.TryLock(ctx); !errors.Is(err, zklock.ErrLocked) {
			t.Errorf("%s: a rival's TryLock after the refused nil-ctx Unlock: %v, want ErrLocked", name, err)
		}
	}
	rival, err := zklock.NewRWMutex(s2, lockPath(t, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rival.TryRLock(ctx); !errors.Is(err, zklock.ErrLocked) {
		t.Errorf("rw: a rival's TryRLock after the refused nil-ctx Unlock/Downgrade: %v, want ErrLocked", err)
	}
	for _, l := range []interface{ Unlock(context.Context) error }{m, r, rw} {
		if err := l.Unlock(ctx); err != nil {
			t.Errorf("the proper Unlock after the refused one: %v", err)
		}
	}
}

// playPrograms returns, for each example of the package in dir (its test
// files of package pkg_test and pkg), the program go/doc synthesizes for
// it, as pkg.go.dev's Run button and a reader copying it get: the body as
// main, with the imports and the declarations of its own file it uses.
// An example whose program go/doc cannot synthesize (it uses a
// declaration of another file) maps to "".
func playPrograms(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := gotoken.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	byPkg := map[string][]*ast.File{}
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		byPkg[f.Name.Name] = append(byPkg[f.Name.Name], f)
	}
	out := map[string]string{}
	for _, files := range byPkg {
		for _, e := range doc.Examples(files...) {
			if e.Play == nil {
				out["Example"+e.Name] = ""
				continue
			}
			var b bytes.Buffer
			if err := format.Node(&b, fset, e.Play); err != nil {
				t.Fatal(err)
			}
			out["Example"+e.Name] = b.String()
		}
	}
	return out
}

// TestReview48b_ExamplesCompileAlone: every example of the root and of zk,
// as go/doc extracts it into a program of its own (what pkg.go.dev runs
// and a reader copies), exists and compiles on its own: the standalone
// claim checked by the compiler, not by a list of helper names.
func TestReview48b_ExamplesCompileAlone(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	replace := map[string]string{}
	var pkgs []string
	n := 0
	for _, dir := range []string{".", "zk"} {
		progs := playPrograms(t, dir)
		if len(progs) < 10 && dir == "." || len(progs) < 3 {
			t.Fatalf("%s: only %d examples found", dir, len(progs))
		}
		for name, src := range progs {
			if src == "" {
				t.Errorf("%s: %s: go/doc synthesizes no program for it (it uses a declaration outside its file)", dir, name)
				continue
			}
			n++
			rel := fmt.Sprintf("review48bplay/%s_%s", strings.ReplaceAll(filepath.Clean(dir), ".", "root"), name)
			f := filepath.Join(tmp, fmt.Sprintf("%d.go", n))
			if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			replace[filepath.Join(wd, rel, "main.go")] = f
			pkgs = append(pkgs, "./"+rel)
		}
	}
	ov, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	ovf := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovf, ov, 0o600); err != nil {
		t.Fatal(err)
	}
	// Several packages: go build compiles them and discards the results.
	out, err := exec.Command("go", append([]string{"build", "-gcflags=-e", "-overlay=" + ovf}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("the examples' programs do not all compile alone: %v\n%s", err, out)
	}
	t.Logf("%d example programs compiled alone", n)
}

// docCodeBlocks returns the code blocks of the go doc comments of the
// package in dir (its doc, funcs, types, methods, values and fields), as
// go doc shows them, each with where it is.
func docCodeBlocks(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := gotoken.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var pr comment.Parser
	add := func(where, text string) {
		for i, b := range pr.Parse(text).Content {
			if c, ok := b.(*comment.Code); ok {
				out[fmt.Sprintf("%s %s #%d", dir, where, i)] = c.Text
			}
		}
	}
	for _, p := range pkgs {
		d := doc.New(p, "x", 0)
		add("package", d.Doc)
		for _, f := range d.Funcs {
			add(f.Name, f.Doc)
		}
		for _, v := range append(d.Vars, d.Consts...) {
			add(strings.Join(v.Names, ","), v.Doc)
		}
		for _, ty := range d.Types {
			add(ty.Name, ty.Doc)
			for _, f := range append(ty.Funcs, ty.Methods...) {
				add(ty.Name+"."+f.Name, f.Doc)
			}
			for _, v := range append(ty.Vars, ty.Consts...) {
				add(strings.Join(v.Names, ","), v.Doc)
			}
			ast.Inspect(ty.Decl, func(n ast.Node) bool {
				if fl, ok := n.(*ast.Field); ok && fl.Doc != nil && len(fl.Names) > 0 {
					add(ty.Name+"."+fl.Names[0].Name, fl.Doc.Text())
				}
				return true
			})
		}
	}
	return out
}

// docFragmentHead declares what the doc comments' fragments name without
// declaring it: a Session, a held Mutex, a Term, a path and data.
const docFragmentHead = `package main

import (
	"context"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

var _ = zk.MaxDataSize

func main() {}

func fragment(ctx context.Context, s *zklock.Session, m *zklock.Mutex, term *zklock.Term, p string, d []byte, password string) {
`

// TestReview48b_DocCommentCodeCompiles: the code go doc shows in the root's
// and zk's doc comments (Term's replacement for the removed Term.Context,
// the CHANGELOG's "the four lines in Term's doc"; WithAuth's replacement
// for WithDigestAuth; zk's Multi with a Guard) compiles as a fragment,
// as doccheck checks the Markdown's: a program with the names it uses
// declared, "declared and not used" of its own results aside.
func TestReview48b_DocCommentCodeCompiles(t *testing.T) {
	t.Parallel()
	blocks := docCodeBlocks(t, ".")
	for k, v := range docCodeBlocks(t, "zk") {
		blocks[k] = v
	}
	if len(blocks) < 4 {
		t.Fatalf("found only %d code blocks in the doc comments: %v", len(blocks), blocks)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	replace := map[string]string{}
	var pkgs []string
	where := map[string]string{}
	i := 0
	for k, code := range blocks {
		i++
		body := code
		if strings.HasSuffix(strings.TrimSpace(code), ",") {
			// An argument list (of options): the arguments of NewSession.
			body = "_, _ = zklock.NewSession(ctx,\n" + code + ")\n"
		}
		src := docFragmentHead + body + "\n}\n"
		f := filepath.Join(tmp, fmt.Sprintf("%d.go", i))
		if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		rel := fmt.Sprintf("review48bdoc/b%d", i)
		replace[filepath.Join(wd, rel, "main.go")] = f
		pkgs = append(pkgs, "./"+rel)
		where[rel] = k
	}
	ov, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	ovf := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovf, ov, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("go", append([]string{"build", "-gcflags=-e", "-overlay=" + ovf}, pkgs...)...).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if l == "" || strings.HasPrefix(l, "#") || strings.Contains(l, "declared and not used") {
			continue
		}
		for rel, k := range where {
			if strings.Contains(l, rel+"/") {
				l += " (code block of " + k + ")"
			}
		}
		t.Errorf("a doc comment's code does not compile: %s", l)
	}
	t.Logf("%d code blocks of doc comments compiled", len(blocks))
}

// TestReview48b_CloseWhileWaiting: errors.go's ErrSessionClosed is "a
// blocking call whose Session is closed while it waits": every acquiring
// call of every primitive, waiting behind a rival on another Session, and
// a MultiLock's, returns ErrSessionClosed (through a caller's wrapping)
// when its Session is closed, and no other sentinel of the set; an
// operation after the Close (Unlock of a hold the Close ended, a new
// Lock) returns it too.
func TestReview48b_CloseWhileWaiting(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s1 := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	all := []error{zklock.ErrInvalidArgument, zklock.ErrWrongKind, zklock.ErrTimingUnknown, zklock.ErrNotRevocable,
		zklock.ErrLocked, zklock.ErrHolderAlive, zklock.ErrLockLost, zklock.ErrResigned, zklock.ErrSessionClosed,
		zklock.ErrNotLocked, zklock.ErrAlreadyLocked, zklock.ErrNotOwner}
	// The rivals, on s1, hold every path.
	hm, err := zklock.NewMutex(s1, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	hrw, err := zklock.NewRWMutex(s1, lockPath(t, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	hsem, err := zklock.NewSemaphore(s1, lockPath(t, "sem"), 1)
	if err != nil {
		t.Fatal(err)
	}
	he, err := zklock.NewElection(s1, lockPath(t, "e"))
	if err != nil {
		t.Fatal(err)
	}
	if err := hm.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := hrw.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := hsem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := he.Campaign(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The waiters, on s2.
	m, err := zklock.NewMutex(s2, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := zklock.NewReentrantMutex(s2, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	rw, err := zklock.NewRWMutex(s2, lockPath(t, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	rr, err := zklock.NewRWMutex(s2, lockPath(t, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	sem, err := zklock.NewSemaphore(s2, lockPath(t, "sem"), 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := zklock.NewElection(s2, lockPath(t, "e"))
	if err != nil {
		t.Fatal(err)
	}
	e2, err := zklock.NewElection(s2, lockPath(t, "e"))
	if err != nil {
		t.Fatal(err)
	}
	free, err := zklock.NewMutex(s2, lockPath(t, "free"))
	if err != nil {
		t.Fatal(err)
	}
	mlm, err := zklock.NewMutex(s2, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	ml, err := zklock.NewMultiLock(free, mlm)
	if err != nil {
		t.Fatal(err)
	}
	held, err := zklock.NewMutex(s2, lockPath(t, "held"))
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Mutex.Lock":          func() error { return m.Lock(ctx) },
		"ReentrantMutex.Lock": func() error { return r.Lock(ctx) },
		"RWMutex.Lock":        func() error { return rw.Lock(ctx) },
		"RWMutex.RLock":       func() error { return rr.RLock(ctx) },
		"Semaphore.Acquire":   func() error { _, err := sem.Acquire(ctx, 1); return err },
		"Election.Campaign":   func() error { _, err := e.Campaign(ctx, nil); return err },
		"Election.Run": func() error {
			return e2.Run(ctx, nil, func(context.Context, *zklock.Term) error { return errors.New("ran while another leads") })
		},
		"MultiLock.Lock": func() error { return ml.Lock(ctx) },
	}
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(calls))
	for name, call := range calls {
		go func() { results <- result{name, callNoPanic(call)} }()
	}
	// Every waiter is queued (its node is among the contenders) before
	// the Close, so that the Close meets it waiting.
	eventually(t, 20*time.Second, "every waiter queued", func() bool {
		n := 0
		for _, p := range []string{"m", "rw", "sem", "e"} {
			cs, err := zklock.Contenders(ctx, s1, lockPath(t, p))
			if err != nil {
				return false
			}
			for _, c := range cs {
				if c.Session == s2.Client().SessionID() && !c.Holds {
					n++
				}
			}
		}
		// m: Mutex, ReentrantMutex, MultiLock's part; rw: two; sem: one
		// (Curator's layout may queue on its locks first); e: two.
		return n >= 7
	})
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	for range calls {
		select {
		case res := <-results:
			err := fmt.Errorf("app: %w", res.err)
			if !errors.Is(err, zklock.ErrSessionClosed) {
				t.Errorf("%s waiting when its Session closed: %v, want ErrSessionClosed", res.name, res.err)
			}
			for _, other := range all {
				if other != zklock.ErrSessionClosed && errors.Is(err, other) {
					t.Errorf("%s waiting when its Session closed: %v is also %v", res.name, res.err, other)
				}
			}
		case <-ctx.Done():
			t.Fatal("a waiter did not return after its Session closed")
		}
	}
	// Close "fires every outstanding loss signal", and Unlock returns
	// ErrLockLost "if Lost fired before the release" (Unlock's doc), though
	// errors.go says ErrSessionClosed is "any operation on a closed
	// Session": either is the hold-is-gone group; nil would say released.
	if err := held.Unlock(ctx); !errors.Is(err, zklock.ErrLockLost) && !errors.Is(err, zklock.ErrSessionClosed) {
		t.Errorf("Unlock of a hold its Session's Close ended: %v, want ErrLockLost or ErrSessionClosed", err)
	}
	if err := free.Lock(ctx); !errors.Is(err, zklock.ErrSessionClosed) {
		t.Errorf("Lock after Close: %v, want ErrSessionClosed", err)
	}
}

// TestReview48b_GuardSameSessionHandoff: when a hold passes to another
// handle of the same Session on the same path (a second ReentrantMutex
// owner, a second Mutex, a second RWMutex writer), the first holder's
// guard, taken while it held, stops committing: a guard is its own hold's,
// never its Session's, even when the next holder shares the session (and
// so could share an ephemeral node's owner).
func TestReview48b_GuardSameSessionHandoff(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	type lock interface {
		Lock(context.Context) error
		Unlock(context.Context) error
		Guard() *zk.CheckOp
	}
	mk := map[string]func(p string) (lock, error){
		"ReentrantMutex": func(p string) (lock, error) { return zklock.NewReentrantMutex(s, p) },
		"Mutex":          func(p string) (lock, error) { return zklock.NewMutex(s, p) },
		"RWMutex":        func(p string) (lock, error) { return zklock.NewRWMutex(s, p) },
		"Mutex seq":      func(p string) (lock, error) { return zklock.NewMutex(s, p, zklock.WithSequenceLayout()) },
		"Mutex listing":  func(p string) (lock, error) { return zklock.NewMutex(s, p, zklock.WithListingHandoff()) },
	}
	for name, newLock := range mk {
		p := lockPath(t, strings.ReplaceAll(name, " ", "-"))
		a, err := newLock(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := newLock(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		ga := a.Guard()
		if name == "Mutex seq" {
			// No guard (TestReview48b_SeqLayoutGuardReused).
			if err := guardWrites(ctx, s, data, name+": a holds", ga); !errors.Is(err, zklock.ErrInvalidArgument) {
				t.Errorf("%s: a's guarded write while a holds: %v, want ErrInvalidArgument (no guard)", name, err)
			}
			if err := a.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := guardWrites(ctx, s, data, name+": a holds", ga); err != nil {
			t.Fatalf("%s: a's guarded write while a holds: %v", name, err)
		}
		got := make(chan error, 1)
		go func() { got <- b.Lock(ctx) }()
		eventually(t, 10*time.Second, name+": b queued", func() bool {
			cs, err := zklock.Contenders(ctx, s, p)
			return err == nil && len(cs) == 2
		})
		if err := a.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("%s: b.Lock: %v", name, err)
		}
		if err := guardWrites(ctx, s, data, name+": b holds, a's guard", ga); err == nil {
			t.Errorf("%s: a's guard committed a write while b (same Session) holds", name)
		} else if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			t.Errorf("%s: a's guard after the handoff: %v, want zk.ErrNoNode or zk.ErrBadVersion", name, err)
		}
		if err := guardWrites(ctx, s, data, name+": b holds", b.Guard()); err != nil {
			t.Errorf("%s: b's guarded write while b holds: %v", name, err)
		}
		if err := b.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReview48b_ZKErrorsThroughEveryRecipe: errors.go says ZooKeeper's
// errors are wrapped so errors.Is finds them: every acquiring call of every
// primitive, on a path under an ephemeral node (where ZooKeeper refuses
// children), fails at once with an error errors.Is finds
// zk.ErrNoChildrenForEphemerals in (through a caller's wrapping), and does
// not retry it until its ctx ends; and a failed Multi's results carry
// zk's errors (the failing op's, ErrRolledBack for the others).
func TestReview48b_ZKErrorsThroughEveryRecipe(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	eph := data + "-eph"
	if _, err := s.Client().Create(ctx, eph, nil, zk.ModeEphemeral); err != nil {
		t.Fatal(err)
	}
	p := eph + "/lock"
	m, err := zklock.NewMutex(s, p)
	if err != nil {
		t.Fatal(err)
	}
	mseq, err := zklock.NewMutex(s, p, zklock.WithSequenceLayout())
	if err != nil {
		t.Fatal(err)
	}
	r, err := zklock.NewReentrantMutex(s, p)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := zklock.NewRWMutex(s, p)
	if err != nil {
		t.Fatal(err)
	}
	sem, err := zklock.NewSemaphore(s, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	psem, err := zklock.NewSemaphore(s, p, 2, zklock.WithPermitLayout())
	if err != nil {
		t.Fatal(err)
	}
	e, err := zklock.NewElection(s, p)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(ctx context.Context) error{
		"Mutex.Lock":                   m.Lock,
		"Mutex.TryLock":                m.TryLock,
		"Mutex(seq).Lock":              mseq.Lock,
		"ReentrantMutex.Lock":          r.Lock,
		"RWMutex.Lock":                 rw.Lock,
		"RWMutex.RLock":                rw.RLock,
		"RWMutex.TryRLock":             rw.TryRLock,
		"Semaphore.Acquire":            func(ctx context.Context) error { _, err := sem.Acquire(ctx, 1); return err },
		"Semaphore(permit).Acquire":    func(ctx context.Context) error { _, err := psem.Acquire(ctx, 1); return err },
		"Semaphore(permit).TryAcquire": func(ctx context.Context) error { _, err := psem.TryAcquire(ctx, 1); return err },
		"Election.Campaign":            func(ctx context.Context) error { _, err := e.Campaign(ctx, nil); return err },
	}
	for name, call := range calls {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		err := callNoPanic(func() error { return call(cctx) })
		cancel()
		if !errors.Is(fmt.Errorf("app: %w", err), zk.ErrNoChildrenForEphemerals) {
			t.Errorf("%s under an ephemeral node: %v (after %v), want errors.Is zk.ErrNoChildrenForEphemerals", name, err, time.Since(start).Round(time.Millisecond))
		}
	}
	res, err := s.Client().Multi(ctx, &zk.CheckOp{Path: data + "-none", Version: -1}, &zk.SetDataOp{Path: data, Version: -1})
	if !errors.Is(err, zk.ErrNoNode) || len(res) != 2 || !errors.Is(res[0].Err, zk.ErrNoNode) || !errors.Is(res[1].Err, zk.ErrRolledBack) {
		t.Errorf("a failed Multi: %v, results %+v; want ErrNoNode, then ErrRolledBack", err, res)
	}
}

// TestReview48b_NoAuthThroughReaders: the readers of a lock path
// (Contenders, Break, Revoke, WatchLock's LockState.Err) on a path whose
// ACL refuses the session a read return an error errors.Is finds
// zk.ErrNoAuth in, through a caller's wrapping, and no recipe sentinel
// that would send the caller elsewhere (ErrNotLocked: "nobody holds").
func TestReview48b_NoAuthThroughReaders(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	p := data + "-noread"
	if _, err := s.Client().Create(ctx, p, nil, zk.ModePersistent, zk.WorldACL(zk.PermCreate|zk.PermDelete|zk.PermWrite|zk.PermAdmin)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Client().Delete(context.Background(), p, -1) })
	check := func(what string, err error) {
		t.Helper()
		err = fmt.Errorf("app: %w", err)
		if !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s of an unreadable path: %v, want errors.Is zk.ErrNoAuth", what, err)
		}
		for _, e := range []error{zklock.ErrNotLocked, zklock.ErrInvalidArgument, zklock.ErrLocked, zklock.ErrHolderAlive} {
			if errors.Is(err, e) {
				t.Errorf("%s of an unreadable path: %v is also %v", what, err, e)
			}
		}
	}
	_, err := zklock.Contenders(ctx, s, p)
	check("Contenders", err)
	_, err = zklock.Break(ctx, s, p, true)
	check("Break", err)
	_, err = zklock.Revoke(ctx, s, p)
	check("Revoke", err)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	states, err := zklock.WatchLock(wctx, s, p)
	if err != nil {
		check("WatchLock", err)
	} else {
		select {
		case st := <-states:
			check("WatchLock's first LockState.Err", st.Err)
		case <-ctx.Done():
			t.Fatal("WatchLock delivered no state")
		}
		cancel()
		for range states {
		}
	}
}

// TestReview48b_SharedReadGuard: an RWMutex handle shared by goroutines
// read-locked twice ("one handle, many goroutines"): every guard taken
// from it while read-held (after both RLocks, and after the first
// RUnlock) stops committing once a rival writer on another Session holds.
func TestReview48b_SharedReadGuard(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	p := lockPath(t, "rw")
	rw, err := zklock.NewRWMutex(s, p)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() { done <- rw.RLock(ctx) }()
	}
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	g1 := rw.Guard()
	if g1 == nil {
		t.Fatal("no guard while read-held twice")
	}
	w, err := zklock.NewRWMutex(s2, p)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- w.Lock(ctx) }()
	eventually(t, 10*time.Second, "the writer queued", func() bool {
		cs, err := zklock.Contenders(ctx, s, p)
		return err == nil && len(cs) >= 2 && cs[len(cs)-1].Session == s2.Client().SessionID()
	})
	if err := rw.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	g2 := rw.Guard()
	if g2 != nil {
		if err := guardWrites(ctx, s, data, "one reader left", g2); err != nil {
			t.Logf("the guard after the first of two RUnlocks: %v", err)
		}
	}
	select {
	case err := <-wrote:
		t.Fatalf("the writer got the lock (%v) while one read lock of the shared handle is held", err)
	default:
	}
	if err := rw.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	defer w.Unlock(ctx)
	for name, g := range map[string]*zk.CheckOp{"g1": g1, "g2": g2} {
		if g == nil {
			continue
		}
		if err := guardWrites(ctx, s, data, "writer holds", g); err == nil {
			t.Errorf("%s (%s), taken while read-held, committed a write while a rival writer holds", name, g.Path)
		}
	}
}

// TestReview48b_SessionOptionValues: bad option values NewSession's docs
// refuse are ErrInvalidArgument at NewSession (no session left open): a
// digest credential without ':' or with an empty user (WithAuth's doc),
// an ACL entry with an empty scheme (WithACL's), an empty WithACL (no
// node could be created), a non-positive WithMaxRequestSize.
func TestReview48b_SessionOptionValues(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	for name, opt := range map[string]zklock.SessionOption{
		"WithAuth digest without ':'":   zklock.WithAuth("digest", []byte("billing")),
		"WithAuth digest, empty user":   zklock.WithAuth("digest", []byte(":pw")),
		"WithAuth empty scheme":         zklock.WithAuth("", []byte("x")),
		"WithACL empty scheme":          zklock.WithACL(zk.ACL{Perms: zk.PermAll, Scheme: "", ID: "anyone"}),
		"WithACL of no entry":           zklock.WithACL(),
		"WithMaxRequestSize(0)":         zklock.WithMaxRequestSize(0),
		"WithMaxRequestSize(-1)":        zklock.WithMaxRequestSize(-1),
		"WithSafetyMargin(-1s)":         zklock.WithSafetyMargin(-time.Second),
		"WithEnsembleTiming(-1s, 5)":    zklock.WithEnsembleTiming(-time.Second, 5),
		"WithServers(\"\")":             zklock.WithServers(""),
		"WithServers(\"no-port-here\")": zklock.WithServers("no-port-here"),
	} {
		opts := []zklock.SessionOption{zklock.WithServers(srv.Servers()...), opt}
		s, err := zklock.NewSession(ctx, opts...)
		if s != nil {
			s.Close()
		}
		if !errors.Is(err, zklock.ErrInvalidArgument) {
			t.Errorf("%s: NewSession: %v, want ErrInvalidArgument", name, err)
		}
	}
}

// TestReview48b_GuardAppendAliasing: the documented composition is
// append(l.Guard(), writes...): two callers appending to the guards of
// one Lease or MultiLock (one handle, many goroutines) must not share a
// backing array, else one's write lands in the other's transaction. Each
// Guard has no spare capacity, or a fresh array each call.
func TestReview48b_GuardAppendAliasing(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	sem, err := zklock.NewSemaphore(s, lockPath(t, "sem"), 3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := sem.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	m, err := zklock.NewMutex(s, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	ml, err := zklock.NewMultiLock(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer ml.Unlock(ctx)
	for name, guard := range map[string]func() []zk.Op{"Lease": l.Guard, "MultiLock": ml.Guard} {
		x := &zk.SetDataOp{Path: "/x", Version: -1}
		y := &zk.SetDataOp{Path: "/y", Version: -1}
		a := append(guard(), x)
		b := append(guard(), y)
		if a[len(a)-1] != zk.Op(x) {
			t.Errorf("%s: append(Guard(), y) by a second caller overwrote the first caller's write: %v", name, a[len(a)-1])
		}
		if b[len(b)-1] != zk.Op(y) {
			t.Errorf("%s: second append lost its write", name)
		}
	}
}

// TestReview48b_APICountByTypes: issue 48's bound counted another way than
// TestAPISize's (go/doc of the source): by the type checker, every exported
// package-level name and every exported method in the method set of *T
// for each exported type T (promoted methods included; an interface's
// methods, Metrics' six, counted as TestAPISize's ceiling does). It must be
// at most 126, and at most 120 without the Metrics interface's methods.
func TestReview48b_APICountByTypes(t *testing.T) {
	t.Parallel()
	fset := gotoken.NewFileSet()
	p, err := importer.ForCompiler(fset, "source", nil).Import("github.com/zklock/zklock")
	if err != nil {
		t.Fatal(err)
	}
	sc := p.Scope()
	var names []string
	ifaceMethods := 0
	for _, n := range sc.Names() {
		o := sc.Lookup(n)
		if !o.Exported() {
			continue
		}
		names = append(names, n)
		tn, ok := o.(*types.TypeName)
		if !ok {
			continue
		}
		var ms *types.MethodSet
		_, isIface := tn.Type().Underlying().(*types.Interface)
		if isIface {
			ms = types.NewMethodSet(tn.Type())
		} else {
			ms = types.NewMethodSet(types.NewPointer(tn.Type()))
		}
		for i := 0; i < ms.Len(); i++ {
			if f := ms.At(i).Obj(); f.Exported() {
				names = append(names, n+"."+f.Name())
				if isIface {
					ifaceMethods++
				}
			}
		}
	}
	if len(names) < 60 {
		t.Fatalf("counted only %d names: the count is broken", len(names))
	}
	if len(names) > 126 || len(names)-ifaceMethods > 120 {
		t.Errorf("the root exports %d names and methods (%d without interface methods), over 126/120:\n%s",
			len(names), len(names)-ifaceMethods, strings.Join(names, "\n"))
	}
	t.Logf("%d exported names and methods by the type checker, %d of them interface methods", len(names), ifaceMethods)
}

// TestReview48b_GuardAfterContainerReaped: the guard of a released hold,
// once the server reaped the lock path's empty CONTAINER and a rival on
// another Session re-created it and holds, still fails, for every layout
// whose node names carry a unique "_c_<uuid>-" part: the default Mutex,
// ReentrantMutex, RWMutex (write and read), Semaphore (Curator's layout and
// the permit layout) and an Election's Term. (WithSequenceLayout's does
// not: TestReview48bBreak_SeqLayoutGuardReused, tag review.)
func TestReview48b_GuardAfterContainerReaped(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s1 := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s1)
	// hold acquires on s, and returns its guard and its release.
	type hold func(s *zklock.Session, p string) (guard []zk.Op, release func() error)
	lock := func(l interface {
		Lock(context.Context) error
		Unlock(context.Context) error
		Guard() *zk.CheckOp
	}, err error) ([]zk.Op, func() error) {
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		return []zk.Op{l.Guard()}, func() error { return l.Unlock(ctx) }
	}
	lease := func(sem *zklock.Semaphore, err error) ([]zk.Op, func() error) {
		if err != nil {
			t.Fatal(err)
		}
		l, err := sem.Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return l.Guard(), func() error { return l.Release(ctx) }
	}
	holds := map[string]hold{
		"Mutex":          func(s *zklock.Session, p string) ([]zk.Op, func() error) { return lock(zklock.NewMutex(s, p)) },
		"ReentrantMutex": func(s *zklock.Session, p string) ([]zk.Op, func() error) { return lock(zklock.NewReentrantMutex(s, p)) },
		"RWMutex":        func(s *zklock.Session, p string) ([]zk.Op, func() error) { return lock(zklock.NewRWMutex(s, p)) },
		"RWMutex read": func(s *zklock.Session, p string) ([]zk.Op, func() error) {
			rw, err := zklock.NewRWMutex(s, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := rw.RLock(ctx); err != nil {
				t.Fatal(err)
			}
			return []zk.Op{rw.Guard()}, func() error { return rw.RUnlock(ctx) }
		},
		"Semaphore": func(s *zklock.Session, p string) ([]zk.Op, func() error) { return lease(zklock.NewSemaphore(s, p, 1)) },
		"Semaphore permit": func(s *zklock.Session, p string) ([]zk.Op, func() error) {
			return lease(zklock.NewSemaphore(s, p, 1, zklock.WithPermitLayout()))
		},
		"Election": func(s *zklock.Session, p string) ([]zk.Op, func() error) {
			e, err := zklock.NewElection(s, p)
			if err != nil {
				t.Fatal(err)
			}
			term, err := e.Campaign(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			return []zk.Op{term.Guard()}, func() error { return e.Resign(ctx) }
		},
	}
	for name, h := range holds {
		p := lockPath(t, strings.ReplaceAll(name, " ", "-"))
		g, release := h(s1, p)
		if err := release(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, name+": the empty container reaped", func() bool {
			_, ok, err := s1.Client().Exists(ctx, p)
			return err == nil && !ok
		})
		rg, rrelease := h(s2, p)
		if err := guardWrites(ctx, s1, data, name+": a rival holds", g...); err == nil {
			t.Errorf("%s: a released hold's guard %v committed a write while a rival holds %v", name, g[0], rg[0])
		}
		if err := rrelease(); err != nil {
			t.Fatal(err)
		}
	}
}
