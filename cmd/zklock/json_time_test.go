package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jsonStamp is the one form of a time in --json output: RFC 3339, UTC,
// milliseconds.
var jsonStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// Issue 47: the --json outputs wrote times as Go's time.Time does, in the
// local zone and with as many fractional digits as were not zero
// ("2026-11-24T17:58:44.29+05:30" beside "...44.291Z"). Every command's
// times are RFC 3339 in UTC with milliseconds, and its durations integer
// milliseconds in fields named *_ms: status, ls, status --watch and
// elect --observe, run in a zone far from UTC.
func TestJSONTimesAreOneForm(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers, lock, election := c.ConnectString(), lockPath(t, "lock"), lockPath(t, "election")
	env := append(envWith(servers), "TZ=Asia/Kolkata") // +05:30: a local time cannot pass for UTC

	observer := startEnv(t, env, "elect", "--observe", "--json", election)
	watcher := startEnv(t, env, "status", "--watch", "--json", lock)
	holder := start(t, servers, "run", lock, "--", "sleep", "60")
	leader := start(t, servers, "elect", election, "alpha", "--", "sleep", "60")
	awaitQueue(t, servers, lock, 1, 0)
	eventually(t, 30*time.Second, "the observer to see alpha lead", func() bool {
		return strings.Contains(observer.out.String(), `"alpha"`)
	})
	eventually(t, 30*time.Second, "the watcher to see the holder", func() bool {
		return strings.Contains(watcher.out.String(), `"role":"holder"`)
	})
	outputs := map[string]string{}
	for name, args := range map[string][]string{
		"status --json": {"status", "--json", lock},
		"ls --json":     {"ls", "--json", strings.TrimSuffix(lock, "/lock")},
	} {
		p := startEnv(t, env, args...)
		if code := p.wait(t, procTimeout); code != exitOK {
			t.Fatalf("%s: exit %d, stderr %s", name, code, p.errOut.String())
		}
		outputs[name] = p.out.String()
	}
	for _, p := range []*proc{observer, watcher, holder, leader} {
		p.signal(t, syscall.SIGTERM)
		p.wait(t, procTimeout)
	}
	outputs["elect --observe --json"] = observer.out.String()
	outputs["status --watch --json"] = watcher.out.String()

	for name, out := range outputs {
		seen := map[string]int{}
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s: %v in %q", name, err, out)
			}
			checkJSONTimes(t, name, v, seen)
		}
		t.Logf("%s: %v", name, seen)
		if seen["created"] == 0 || (name != "elect --observe --json" && seen["age_ms"] == 0) ||
			(strings.Contains(name, "--watch") || strings.Contains(name, "--observe")) && seen["time"] == 0 {
			t.Errorf("%s: found the fields %v, want its times and ages: %s", name, seen, out)
		}
	}
}

// checkJSONTimes checks every time (time, created) and duration (*_ms)
// in v, counting them in seen.
func checkJSONTimes(t *testing.T, name string, v any, seen map[string]int) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			checkJSONTimes(t, name, e, seen)
		}
	case map[string]any:
		for k, e := range v {
			switch {
			case k == "time" || k == "created":
				seen[k]++
				if s, ok := e.(string); !ok || !jsonStamp.MatchString(s) {
					t.Errorf("%s: %q is %v; want RFC 3339 in UTC with milliseconds", name, k, e)
				}
			case strings.HasSuffix(k, "_ms"):
				seen[k]++
				if f, ok := e.(float64); !ok || f != float64(int64(f)) {
					t.Errorf("%s: %q is %v; want integer milliseconds", name, k, e)
				}
			default:
				checkJSONTimes(t, name, e, seen)
			}
		}
	}
}
