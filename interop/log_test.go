package interop_test

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// monotonicNS reads CLOCK_MONOTONIC, the clock the drivers read too: Java's
// System.nanoTime() and Python's time.monotonic_ns() are CLOCK_MONOTONIC on
// Linux, and it is one system-wide clock, so timestamps of different
// processes compare. (time.Now's monotonic reading is the same clock but
// Go does not expose its value, only differences within the process.)
func monotonicNS() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // CLOCK_MONOTONIC always exists on Linux
	}
	return ts.Nano()
}

// sharedLog is the log every party of a test appends to.
type sharedLog struct {
	path string
	f    *os.File
}

func newLog(t *testing.T) *sharedLog {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &sharedLog{path: path, f: f}
}

// record appends "<ns> <id> <what> <mode>" in one write(2) on the O_APPEND
// file, which the kernel never interleaves with another process's write. The
// timestamp is read last, right before the write: "start" is recorded after
// acquiring and "end" before releasing, so the intervals of two owners that
// exclude each other cannot overlap.
func (l *sharedLog) record(id, what, mode string) error {
	_, err := fmt.Fprintf(l.f, "%d %s %s %s\n", monotonicNS(), id, what, mode)
	return err
}

type event struct {
	ns             int64
	id, what, mode string
}

func (l *sharedLog) events(t *testing.T) []event {
	t.Helper()
	f, err := os.Open(l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 || (fs[2] != "start" && fs[2] != "end") {
			t.Fatalf("bad log line %q", sc.Text())
		}
		ns, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			t.Fatalf("bad log line %q: %v", sc.Text(), err)
		}
		evs = append(evs, event{ns, fs[1], fs[2], fs[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// On equal timestamps a start sorts first, so that a tie counts as an
	// overlap: the check errs on the side of failing.
	slices.SortStableFunc(evs, func(a, b event) int {
		if a.ns != b.ns {
			return cmp.Compare(a.ns, b.ns)
		}
		return strings.Compare(b.what, a.what) // "start" > "end"
	})
	return evs
}

// rule says whether the owners active at once (counted by mode) are allowed,
// and why not.
type rule func(active map[string]int) string

// exclusive allows one owner at a time, whatever its mode.
func exclusive(active map[string]int) string {
	if n := total(active); n > 1 {
		return fmt.Sprintf("%d owners at once", n)
	}
	return ""
}

// readWrite allows any number of readers ("read") or one writer ("write").
func readWrite(active map[string]int) string {
	w, r := active["write"], active["read"]
	switch {
	case w > 1:
		return fmt.Sprintf("%d writers at once", w)
	case w == 1 && r > 0:
		return fmt.Sprintf("a writer beside %d readers", r)
	}
	return ""
}

// atMost allows up to k owners at once.
func atMost(k int) rule {
	return func(active map[string]int) string {
		if n := total(active); n > k {
			return fmt.Sprintf("%d owners at once, limit %d", n, k)
		}
		return ""
	}
}

func total(active map[string]int) int {
	n := 0
	for _, c := range active {
		n += c
	}
	return n
}

// report is what check found.
type report struct {
	violations []string       // broken rules, with the events around them
	starts     map[string]int // acquisitions per party
	maxActive  map[string]int // the most owners of each mode at once
	order      []string       // party of each acquisition, in time order
}

// check replays evs, sorted by time, and reports every instant where the
// active owners break r, and every party whose starts and ends do not
// alternate.
func check(evs []event, r rule) report {
	rep := report{starts: map[string]int{}, maxActive: map[string]int{}}
	active := map[string]int{}
	holding := map[string]string{} // party -> mode while it holds
	for i, e := range evs {
		switch e.what {
		case "start":
			if _, ok := holding[e.id]; ok {
				rep.violations = append(rep.violations, fmt.Sprintf("%s started twice without an end (event %d)", e.id, i))
				continue
			}
			holding[e.id] = e.mode
			active[e.mode]++
			rep.starts[e.id]++
			rep.order = append(rep.order, e.id)
			rep.maxActive[e.mode] = max(rep.maxActive[e.mode], active[e.mode])
			if why := r(active); why != "" {
				rep.violations = append(rep.violations, fmt.Sprintf("%s when %s started: holding %v (event %d)", why, e.id, holding, i))
			}
		case "end":
			m, ok := holding[e.id]
			if !ok || m != e.mode {
				rep.violations = append(rep.violations, fmt.Sprintf("%s ended %s without a start (event %d)", e.id, e.mode, i))
				continue
			}
			delete(holding, e.id)
			active[m]--
		}
	}
	for id := range holding {
		rep.violations = append(rep.violations, fmt.Sprintf("%s never ended", id))
	}
	return rep
}

// verify fails the test if the log breaks r or if a party did not acquire
// exactly the number of times in want, and returns the report.
func verify(t *testing.T, l *sharedLog, r rule, want map[string]int) report {
	t.Helper()
	evs := l.events(t)
	rep := check(evs, r)
	for _, v := range rep.violations {
		t.Error(v)
	}
	for id, n := range want {
		if rep.starts[id] != n {
			t.Errorf("%s acquired %d times, want %d", id, rep.starts[id], n)
		}
	}
	for id := range rep.starts {
		if _, ok := want[id]; !ok {
			t.Errorf("unexpected party %s in the log", id)
		}
	}
	if t.Failed() {
		var b strings.Builder
		for _, e := range evs {
			fmt.Fprintf(&b, "%d %s %s %s\n", e.ns, e.id, e.what, e.mode)
		}
		t.Logf("log:\n%s", b.String())
	}
	return rep
}

// TestCheck shows that the checker catches what it must, on made-up logs.
func TestCheck(t *testing.T) {
	ev := func(ns int64, id, what, mode string) event { return event{ns, id, what, mode} }
	tests := []struct {
		name string
		evs  []event
		r    rule
		bad  bool
	}{
		{"handover", []event{ev(1, "a", "start", "mutex"), ev(2, "a", "end", "mutex"), ev(3, "b", "start", "mutex"), ev(4, "b", "end", "mutex")}, exclusive, false},
		{"overlap", []event{ev(1, "a", "start", "mutex"), ev(2, "b", "start", "mutex"), ev(3, "a", "end", "mutex"), ev(4, "b", "end", "mutex")}, exclusive, true},
		{"readers share", []event{ev(1, "a", "start", "read"), ev(2, "b", "start", "read"), ev(3, "a", "end", "read"), ev(4, "b", "end", "read")}, readWrite, false},
		{"writer beside reader", []event{ev(1, "a", "start", "read"), ev(2, "b", "start", "write"), ev(3, "a", "end", "read"), ev(4, "b", "end", "write")}, readWrite, true},
		{"two of two", []event{ev(1, "a", "start", "sem"), ev(2, "b", "start", "sem"), ev(3, "a", "end", "sem"), ev(4, "b", "end", "sem")}, atMost(2), false},
		{"three of two", []event{ev(1, "a", "start", "sem"), ev(2, "b", "start", "sem"), ev(3, "c", "start", "sem"), ev(4, "a", "end", "sem"), ev(5, "b", "end", "sem"), ev(6, "c", "end", "sem")}, atMost(2), true},
		{"unended", []event{ev(1, "a", "start", "mutex")}, exclusive, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := check(tt.evs, tt.r)
			if bad := len(rep.violations) > 0; bad != tt.bad {
				t.Errorf("violations %q, want some: %v", rep.violations, tt.bad)
			}
		})
	}
}
