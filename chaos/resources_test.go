package chaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/chaos"
)

// series is one source's samples every 10s for span, with value(i) for
// sample i set through set.
func series(src string, span time.Duration, set func(s *chaos.Sample, i int)) []chaos.Sample {
	n := int(span / chaos.SampleEvery)
	out := make([]chaos.Sample, n+1)
	for i := range out {
		out[i] = chaos.Sample{Src: src, T: int64(i) * int64(chaos.SampleEvery)}
		set(&out[i], i)
	}
	return out
}

func TestResourceGrowth(t *testing.T) {
	long := 2 * chaos.GrowthSpan
	flat := func(s *chaos.Sample, i int) { s.Heap, s.Gor = 20<<20+int64(i%7)<<20, 60+int64(i%5) }
	leakGor := func(s *chaos.Sample, i int) { s.Heap, s.Gor = 20<<20, 60+int64(i) } // one goroutine per 10s
	leakHeap := func(s *chaos.Sample, i int) { s.Heap, s.Gor = 20<<20+int64(i)<<18, 60 }
	servers := func(s *chaos.Sample, i int) { s.Nodes, s.Watches = 400+int64(i%30), 30+int64(i%9) }
	leakNodes := func(s *chaos.Sample, i int) { s.Nodes, s.Watches = 400+int64(i), 30 }
	for _, tc := range []struct {
		name    string
		samples []chaos.Sample
		want    []string // each must appear in one violation; none when empty
	}{
		{"flat", append(series("w1.1", long, flat), series("servers", long, servers)...), nil},
		{"goroutines grow", series("w1.1", long, leakGor), []string{"w1.1 grew", "goroutines"}},
		{"heap grows", series("w2.1", long, leakHeap), []string{"w2.1 grew", "heap"}},
		{"nodes grow", series("servers", long, leakNodes), []string{"servers grew", "nodes"}},
		{"short incarnation not judged", series("w3.4", chaos.GrowthSpan/2, leakGor), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := outcome(nil, nil, nil)
			r.Samples = tc.samples
			rep := chaos.Check(r)
			if len(tc.want) == 0 {
				if !rep.OK() {
					t.Fatalf("violations %q", rep.Violations)
				}
			} else {
				if len(rep.Violations) != 1 {
					t.Fatalf("want one violation with %q, got %q", tc.want, rep.Violations)
				}
				for _, w := range tc.want {
					if !strings.Contains(rep.Violations[0], w) {
						t.Errorf("violation %q does not name %q", rep.Violations[0], w)
					}
				}
			}
			if !strings.Contains(rep.String(), "resources (") {
				t.Errorf("report has no resources section:\n%s", rep)
			}
		})
	}
}
