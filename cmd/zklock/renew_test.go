package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A reconnect granted a lower session timeout shrinks the safety margin:
// the grace period follows it, so that SIGKILL still comes before the
// servers may expire the session, and zklock says so.
func TestRegraceFollowsALowerTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		grace    time.Duration
		set      bool
		timeout  time.Duration
		want     time.Duration
		changed  bool
		wantNote string
	}{
		{"--grace no longer below the margin", 2 * time.Second, true, 5 * time.Second, 500 * time.Millisecond, true,
			"the session timeout is now 5s (safety margin 1s): the grace period after SIGTERM is now 500ms, was 2s"},
		{"--grace still below the margin", 500 * time.Millisecond, true, 5 * time.Second, 500 * time.Millisecond, false, ""},
		{"derived grace", 3 * time.Second, false, 10 * time.Second, time.Second, true,
			"the grace period after SIGTERM is now 1s, was 3s"},
		{"derived grace, same margin", time.Second, false, 10 * time.Second, time.Second, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			j := &job{cli: &cli{stderr: &stderr, name: "run"}, grace: tc.grace, graceSet: tc.set}
			if changed := j.regrace(tc.timeout); changed != tc.changed || j.grace != tc.want {
				t.Errorf("regrace(%v) from %v: grace %v (changed %v), want %v (changed %v)",
					tc.timeout, tc.grace, j.grace, changed, tc.want, tc.changed)
			}
			if got := stderr.String(); (tc.wantNote == "") != (got == "") || !strings.Contains(got, tc.wantNote) {
				t.Errorf("stderr %q, want it to hold %q", got, tc.wantNote)
			}
		})
	}
}

// zklock looks at the deadline often enough that the supervisor's half
// grace absorbs the lag, within bounds.
func TestRenewEvery(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		2 * time.Second:        50 * time.Millisecond,
		30 * time.Second:       250 * time.Millisecond,
		200 * time.Millisecond: 10 * time.Millisecond,
	} {
		if got := renewEvery(timeout); got != want {
			t.Errorf("renewEvery(%v) = %v, want %v", timeout, got, want)
		}
	}
}
