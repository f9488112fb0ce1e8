package main

import (
	"strings"
	"syscall"
	"testing"
)

// status lists the holder first, then the waiters in the order they queued,
// each with its --data; as JSON and as a table.
func TestStatusListsHolderThenWaitersInOrder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	holder := holdLock(t, servers, path, "--data", "holder-data")
	var waiters []*proc
	for i, data := range []string{"waiter-one", "waiter-two"} {
		waiters = append(waiters, start(t, servers, "run", "--data", data, path, "--", "true"))
		awaitQueue(t, servers, path, 1, i+1)
	}
	r := statusOf(t, servers, path)
	got := []string{r.Kind}
	for _, e := range append(r.Holders, r.Waiting...) {
		got = append(got, e.Role+":"+e.Data)
	}
	// The kind is ls's (issue 47: status said "lock"); a zklock run's
	// Mutex is told from an election by its node's tag.
	want := "mutex holder:holder-data waiting:waiter-one waiting:waiter-two"
	if strings.Join(got, " ") != want || r.WaitingCount != 2 {
		t.Errorf("status --json: got %q, waiting_count %d; want %q, 2", strings.Join(got, " "), r.WaitingCount, want)
	}

	code, out, errOut := runZklock(t, servers, "status", path)
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errOut)
	}
	if title := path + ": mutex, 1 holding, 2 waiting\n"; !strings.HasPrefix(out, title) {
		t.Errorf("status: %q, want it to begin with %q", out, title)
	}
	checkTableOrder(t, out, "holder-data", "waiter-one", "waiter-two")

	holder.signal(t, syscall.SIGTERM)
	for _, p := range append(waiters, holder) {
		p.wait(t, procTimeout)
	}
	if code, out, _ := runZklock(t, servers, "status", path); code != 0 || !strings.Contains(out, "free") {
		t.Errorf("status after all left: exit %d, output %q", code, out)
	}
	// A free path has no kind to show: none, rather than "kind":"".
	if code, out, _ := runZklock(t, servers, "status", "--json", path); code != 0 || strings.Contains(out, `"kind"`) ||
		!strings.Contains(out, `"waiting_count": 0`) {
		t.Errorf("status --json after all left: exit %d, output %q; want no kind and a waiting_count of 0", code, out)
	}
}

func checkTableOrder(t *testing.T, out string, data ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2+len(data) || !strings.HasPrefix(lines[1], "#") {
		t.Fatalf("table has %d lines, want a title, a header and %d rows:\n%s", len(lines), len(data), out)
	}
	for i, d := range data {
		row := strings.Fields(lines[2+i])
		role := "waiting"
		if i == 0 {
			role = "holder"
		}
		if len(row) < 7 || row[1] != role || row[5] != d {
			t.Errorf("row %d = %q, want role %s and data %s", i+1, lines[2+i], role, d)
		}
	}
}

// The layout is detected: semaphore slots and reader/writer holders are
// listed as such, and a plain lock on their path is refused.
func TestStatusDetectsSemaphoreAndRW(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	sem, rw := lockPath(t, "sem"), lockPath(t, "rw")
	a := holdLock(t, servers, sem, "-n", "2", "--data", "a")
	b := holdLock(t, servers, sem, "-n", "2", "--data", "b")
	waiter := start(t, servers, "run", "-n", "2", "--data", "c", sem, "--", "true")
	r := awaitQueue(t, servers, sem, 2, 1)
	if r.Kind != lsSemaphore || r.Limit != 2 || r.Waiting[0].Data != "c" || r.WaitingCount != 1 {
		t.Errorf("semaphore status: %+v", r)
	}
	if code, _, errOut := runZklock(t, servers, "run", "-n", "2", "--try", sem, "--", "true"); code != exitBusy {
		t.Errorf("-n 2 --try on a full semaphore: exit %d, want %d; stderr: %s", code, exitBusy, errOut)
	}
	reader := holdLock(t, servers, rw, "--shared", "--data", "r")
	writer := start(t, servers, "run", "--write", "--data", "w", rw, "--", "true")
	r = awaitQueue(t, servers, rw, 1, 1)
	if r.Kind != lsRWMutex || r.Holders[0].Mode != "read" || r.Waiting[0].Mode != "write" {
		t.Errorf("rw status: %+v", r)
	}
	for _, p := range []string{sem, rw} {
		if code, _, errOut := runZklock(t, servers, "run", "--try", p, "--", "true"); code != exitError {
			t.Errorf("plain lock on %s: exit %d, want %d; stderr: %s", p, code, exitError, errOut)
		}
	}
	for _, p := range []*proc{a, b, reader} {
		p.signal(t, syscall.SIGTERM)
	}
	for _, p := range []*proc{a, b, reader, waiter, writer} {
		p.wait(t, procTimeout)
	}
}

// run -n K --queue takes a slot of a semaphore in the one-queue layout;
// status lists it as such with its limit, and the other layout (and a plain
// lock) is refused on its path.
func TestRunSemaphoreQueueLayout(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	sem := lockPath(t, "semq")
	a := holdLock(t, servers, sem, "-n", "2", "--queue", "--data", "a")
	b := holdLock(t, servers, sem, "-n", "2", "--queue", "--data", "b")
	waiter := start(t, servers, "run", "-n", "2", "--queue", "--data", "c", sem, "--", "true")
	r := awaitQueue(t, servers, sem, 2, 1)
	if r.Kind != lsSemQueue || r.Limit != 2 || r.Waiting[0].Data != "c" {
		t.Errorf("queue-layout semaphore status: %+v", r)
	}
	if code, _, errOut := runZklock(t, servers, "run", "-n", "2", "--queue", "--try", sem, "--", "true"); code != exitBusy {
		t.Errorf("--try on a full semaphore: exit %d, want %d; stderr: %s", code, exitBusy, errOut)
	}
	if code, out, errOut := runZklock(t, servers, "ls", sem); code != 0 || !strings.Contains(out, "semaphore-queue") || !strings.Contains(out, "2/2") {
		t.Errorf("ls: exit %d, output %q, stderr %s; want a semaphore-queue with 2/2 holders", code, out, errOut)
	}
	for _, args := range [][]string{{"-n", "2"}, {}} {
		argv := append(append([]string{"run", "--try"}, args...), sem, "--", "true")
		if code, _, errOut := runZklock(t, servers, argv...); code != exitError {
			t.Errorf("%v on a queue-layout semaphore: exit %d, want %d; stderr: %s", args, code, exitError, errOut)
		}
	}
	for _, p := range []*proc{a, b} {
		p.signal(t, syscall.SIGTERM)
	}
	for _, p := range []*proc{a, b, waiter} {
		p.wait(t, procTimeout)
	}
}
