package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// newSession connects a library session, closed at cleanup.
func newSession(t *testing.T, servers string) *zklock.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(servers, ",")...))
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// background runs f (a blocking acquisition) on a goroutine until it
// returns or the test ends, which cancels its ctx and waits for it.
func background(t *testing.T, f func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := f(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("background acquisition: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// lsFixture is one primitive of each kind under a prefix, held by session
// one, with a waiting mutex and a second candidate of session two.
type lsFixture struct {
	prefix        string
	one           *zklock.Session
	tokens        map[string]int64 // path -> the library's Token of its (first) holder
	mutex, rw     string
	sem, election string
}

func newLsFixture(t *testing.T, servers string) lsFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	defer cancel()
	one, two := newSession(t, servers), newSession(t, servers)
	prefix := lockPath(t, "tree")
	// The mutex is under a plain node called "locks": that is not a
	// semaphore, and ls must look inside it.
	f := lsFixture{prefix: prefix, one: one, tokens: map[string]int64{},
		mutex: prefix + "/locks/jobs", rw: prefix + "/cache", sem: prefix + "/slots", election: prefix + "/leader"}
	m := must2(zklock.NewMutex(one, f.mutex, zklock.WithData([]byte("mutex-holder"))))(t)
	check(t, m.Lock(ctx))
	f.tokens[f.mutex] = m.Token()
	waiter := must2(zklock.NewMutex(two, f.mutex, zklock.WithData([]byte("mutex-waiter"))))(t)
	background(t, func(ctx context.Context) error { return waiter.Lock(ctx) })

	for i, s := range []*zklock.Session{one, two} {
		rw := must2(zklock.NewRWMutex(s, f.rw, zklock.WithData(fmt.Appendf(nil, "reader-%d", i+1))))(t)
		check(t, rw.RLock(ctx))
		if i == 0 {
			f.tokens[f.rw] = rw.Token()
		}
	}
	sem := must2(zklock.NewSemaphore(one, f.sem, 2, zklock.WithData([]byte("lease-1"))))(t)
	lease := must2(sem.Acquire(ctx, 1))(t)
	f.tokens[f.sem] = lease.Token()

	e := must2(zklock.NewElection(one, f.election))(t)
	term := must2(e.Campaign(ctx, []byte("leader-a")))(t)
	f.tokens[f.election] = term.Token()
	other := must2(zklock.NewElection(two, f.election))(t)
	background(t, func(ctx context.Context) error { _, err := other.Campaign(ctx, []byte("leader-b")); return err })

	for _, path := range []string{f.mutex, f.election} {
		eventually(t, 30*time.Second, "a second contender on "+path, func() bool {
			cs, err := zklock.Contenders(ctx, one, path)
			return err == nil && len(cs) == 2
		})
	}
	return f
}

func must2[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		check(t, err)
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ls finds the four primitives, with their kinds, holders (data, session,
// token as the library reports it) and queue lengths, in JSON and in the
// table; a zklock Mutex is told from an election by its node's data.
func TestLsListsEveryKind(t *testing.T) {
	c := shared(t)
	servers := c.ConnectString()
	f := newLsFixture(t, servers)
	session := fmt.Sprintf("0x%x", f.one.Client().SessionID())
	want := []struct {
		path, kind     string
		limit, waiters int
		data           []string
	}{
		{f.rw, lsRWMutex, 0, 0, []string{"reader-1", "reader-2"}},
		{f.election, lsMutexOrElection, 0, 1, []string{"leader-a"}},
		{f.mutex, lsMutex, 0, 1, []string{"mutex-holder"}},
		{f.sem, lsSemaphore, 2, 0, []string{"lease-1"}},
	}

	code, out, errOut := runZklock(t, servers, "ls", "--json", f.prefix)
	if code != exitOK || errOut != "" {
		t.Fatalf("ls --json: exit %d, stderr %q", code, errOut)
	}
	var got []found
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	// The count of waiters has status's name for it (issue 47: "waiters"
	// here, "waiting" a list there).
	if !strings.Contains(out, `"waiting_count": 1`) || strings.Contains(out, `"waiters"`) {
		t.Errorf("ls --json: want waiting_count, not waiters:\n%s", out)
	}
	if len(got) != len(want) {
		t.Fatalf("ls --json found %d primitives, want %d:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		g := got[i]
		var data []string
		for _, h := range g.Holders {
			data = append(data, h.Data)
		}
		if g.Path != w.path || g.Kind != w.kind || g.Limit != w.limit || g.WaitingCount != w.waiters ||
			strings.Join(data, ",") != strings.Join(w.data, ",") {
			t.Errorf("ls --json [%d] = %s %s limit %d, %d waiters, holders %q; want %s %s limit %d, %d waiters, holders %q",
				i, g.Path, g.Kind, g.Limit, g.WaitingCount, data, w.path, w.kind, w.limit, w.waiters, w.data)
			continue
		}
		h := g.Holders[0]
		if h.Session != session || h.Token != f.tokens[w.path] || h.AgeMS < 0 || h.Role != "holder" ||
			(w.kind == lsRWMutex && h.Mode != "read") {
			t.Errorf("%s: first holder %+v; want session %s, token %d", w.path, h, session, f.tokens[w.path])
		}
	}

	code, out, errOut = runZklock(t, servers, "ls", f.prefix)
	if code != exitOK || errOut != "" {
		t.Fatalf("ls: exit %d, stderr %q", code, errOut)
	}
	var rows []string
	for _, w := range want {
		for _, d := range w.data {
			holders := fmt.Sprint(len(w.data))
			if w.limit > 0 {
				holders += fmt.Sprintf("/%d", w.limit)
			}
			kind := w.kind
			if w.kind == lsRWMutex {
				kind += "/read"
			}
			rows = append(rows, fmt.Sprintf("%s %s %s %d %s", w.path, kind, holders, w.waiters, d))
		}
	}
	checkLsTable(t, out, rows)
}

// checkLsTable checks the table's rows: path, kind, holders, waiters and
// data of each, in order, under the header.
func checkLsTable(t *testing.T, out string, rows []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1+len(rows) || !strings.HasPrefix(lines[0], "PATH") {
		t.Fatalf("table has %d lines, want a header and %d rows:\n%s", len(lines), len(rows), out)
	}
	for i, want := range rows {
		f := strings.Fields(lines[1+i])
		if len(f) != 8 || strings.Join([]string{f[0], f[1], f[2], f[3], f[7]}, " ") != want {
			t.Errorf("row %d = %q, want %q and session, age, token", i+1, lines[1+i], want)
		}
	}
}

// A prefix with nothing under it, or none at all, is said so, exit 0;
// --max-nodes cuts a walk short with exit 125, after printing what it
// found.
func TestLsEmptyMissingAndCapped(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	s := newSession(t, servers)
	empty := lockPath(t, "empty")
	for _, p := range []string{"/zklock-cmd-test", lockPath(t, ""), empty, empty + "/plain"} {
		if _, err := s.Client().Create(t.Context(), strings.TrimSuffix(p, "/"), nil, zk.ModePersistent); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ prefix, text string }{
		{empty, "no lock, reader/writer lock, semaphore or election under it"},
		{lockPath(t, "missing"), "does not exist"},
	} {
		if code, out, errOut := runZklock(t, servers, "ls", tc.prefix); code != exitOK || !strings.Contains(out, tc.text) || errOut != "" {
			t.Errorf("ls %s: exit %d, stdout %q, stderr %q; want exit 0 and %q", tc.prefix, code, out, errOut, tc.text)
		}
		if code, out, _ := runZklock(t, servers, "ls", "--json", tc.prefix); code != exitOK || strings.TrimSpace(out) != "[]" {
			t.Errorf("ls --json %s: exit %d, stdout %q; want exit 0 and []", tc.prefix, code, out)
		}
	}
	m := must2(zklock.NewMutex(s, empty+"/plain/deep/lock"))(t)
	check(t, m.Lock(context.Background()))
	// Cut short, stdout says the listing is incomplete and never that
	// nothing is locked: the lock is in what was not read.
	for _, max := range []string{"1", "3"} {
		code, out, errOut := runZklock(t, servers, "ls", "--max-nodes", max, empty)
		if code != exitError || !strings.Contains(errOut, "incomplete") || !strings.Contains(out, "listing incomplete") ||
			strings.Contains(out, "no lock") {
			t.Errorf("ls --max-nodes %s: exit %d, stdout %q, stderr %q; want exit %d, stdout saying the listing is incomplete (not \"no lock\") and a warning",
				max, code, out, errOut, exitError)
		}
	}
	// Cut short after finding one lock: its row, then the same line.
	near := must2(zklock.NewMutex(s, empty+"/near"))(t)
	check(t, near.Lock(context.Background()))
	code, out, errOut := runZklock(t, servers, "ls", "--max-nodes", "5", empty)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitError || !strings.Contains(errOut, "incomplete") || len(lines) != 3 ||
		!strings.HasPrefix(lines[1], empty+"/near ") || !strings.HasPrefix(lines[2], "listing incomplete") {
		t.Errorf("ls --max-nodes 5: exit %d, stdout %q, stderr %q; want exit %d, a header, the row of %s/near and a line saying the listing is incomplete",
			code, out, errOut, exitError, empty)
	}
	if code, out, _ := runZklock(t, servers, "ls", "/"); code != exitOK || !strings.Contains(out, empty+"/plain/deep/lock ") {
		t.Errorf("ls /: exit %d, stdout %q", code, out)
	}
}
