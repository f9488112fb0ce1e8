package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var acquisitionLine = regexp.MustCompile(`^\s+(\d+)\. worker (\d+)  token ([0-9]+)$`) // decimal, as every other token zklock prints

// TestQuickstart runs the demo against a real ZooKeeper and checks what its
// output claims: every worker's turns, in order, with increasing tokens, and
// the final verdict.
func TestQuickstart(t *testing.T) {
	cfg := config{workers: 5, rounds: 3, hold: 5 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	var out bytes.Buffer
	began := time.Now()
	require.NoError(t, run(ctx, &out, cfg), "output:\n%s", &out)
	t.Logf("ran in %v:\n%s", time.Since(began), &out)

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	assert.Regexp(t, `^ZooKeeper: `, lines[0])
	assert.Contains(t, lines[1], "5 workers x 3 rounds")
	turns := map[int]int{}
	var last int64
	acquisitions := lines[2 : len(lines)-1]
	require.Len(t, acquisitions, cfg.workers*cfg.rounds)
	for i, line := range acquisitions {
		m := acquisitionLine.FindStringSubmatch(line)
		require.NotNil(t, m, "line %q", line)
		assert.Equal(t, strconv.Itoa(i+1), m[1])
		worker, _ := strconv.Atoi(m[2])
		token, err := strconv.ParseInt(m[3], 10, 64)
		require.NoError(t, err)
		assert.Greater(t, token, last, "line %q", line)
		last = token
		turns[worker]++
	}
	for w := 1; w <= cfg.workers; w++ {
		assert.Equal(t, cfg.rounds, turns[w], "turns of worker %d", w)
	}
	assert.Equal(t, "OK: 15 acquisitions; never more than 1 holder at once; fencing tokens strictly increased",
		lines[len(lines)-1])
}

func TestRunRejectsBadFlags(t *testing.T) {
	for name, cfg := range map[string]config{
		"no workers":  {workers: 0, rounds: 1},
		"no rounds":   {workers: 1, rounds: 0},
		"long hold":   {workers: 1, rounds: 1, hold: time.Hour},
		"many rounds": {workers: 1, rounds: 1000},
	} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorContains(t, run(context.Background(), &bytes.Buffer{}, cfg), "out of range")
		})
	}
}

// TestCheck makes sure the verdict can fail, so that the demo's OK means
// something.
func TestCheck(t *testing.T) {
	ok := []acquisition{{1, 5}, {2, 7}, {1, 9}}
	for name, tc := range map[string]struct {
		order   []acquisition
		maxHeld int32
		want    string
	}{
		"fine":             {ok, 1, ""},
		"two holders":      {ok, 2, "mutual exclusion violated: 2 workers"},
		"missing turn":     {ok[:2], 1, "2 acquisitions recorded, want 3"},
		"repeated token":   {[]acquisition{{1, 5}, {2, 5}, {1, 9}}, 1, "acquisition 2 has 5 after 5"},
		"decreasing token": {[]acquisition{{1, 5}, {2, 7}, {1, 6}}, 1, "acquisition 3 has 6 after 7"},
	} {
		t.Run(name, func(t *testing.T) {
			err := check(tc.order, tc.maxHeld, 3)
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.want)
			}
		})
	}
}
