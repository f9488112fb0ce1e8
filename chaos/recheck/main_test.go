package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/chaos"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// save writes an outcome in which two mutex holds overlap by overlapMs
// (none when negative) and returns its path.
func save(t *testing.T, overlapMs int64) string {
	ms := int64(time.Millisecond)
	ev := func(ev, proc string, tok, at int64) chaos.Event {
		return chaos.Event{Ev: ev, Proc: proc, Prim: "mutex", Mode: "w", Tok: tok, T: at * ms, Res: chaos.WhyReleased}
	}
	o := &chaos.Outcome{Start: 0, Stop: 1000 * ms, SessionTimeout: 2 * time.Second, Limit: 2,
		Events: []chaos.Event{ev(chaos.EvAcquire, "A", 1, 10), ev(chaos.EvRelease, "A", 1, 100),
			ev(chaos.EvAcquire, "B", 2, 100-overlapMs), ev(chaos.EvRelease, "B", 2, 200)}}
	p := filepath.Join(t.TempDir(), chaos.OutcomeFile)
	if err := chaos.SaveOutcome(p, o); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"clean", []string{save(t, -1)}, 0, "violations: 0"},
		{"overlap", []string{save(t, 20)}, 1, "believed they held together for 20ms"},
		// A fault that failed is a violation of the run's own record.
		{"fault error", []string{filepath.Join("..", "testdata", "golden", "fault-error.json")}, 1,
			"fault client-pause on w1.1 failed: os: process already finished"},
		{"no file", []string{filepath.Join(t.TempDir(), "none.json")}, 2, "no such file"},
		{"no args", nil, 2, "usage: recheck"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out.String(), errb.String())
			}
			if s := out.String() + errb.String(); !strings.Contains(s, tc.want) {
				t.Fatalf("output lacks %q:\n%s", tc.want, s)
			}
		})
	}
}
