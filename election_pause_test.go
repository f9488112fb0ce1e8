package zklock_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// The paused-process test re-executes the test binary as a candidate,
// configured by these variables.
const (
	helperEnv     = "ZKLOCK_ELECTION_HELPER" // "servers|election path|resource path"
	helperSession = 2 * time.Second
)

// TestElectionPausedLeaderProcessIsFenced freezes a leader's whole process
// (SIGSTOP, like a long GC pause) past its session timeout. No client-side
// timer can fire in a frozen process, so when it resumes it may still act
// for an instant before its loss signal fires; this is what fencing is for.
// The test checks that its writes guarded by Term.Guard are rejected once
// the successor leads, and that its term ends promptly after resuming.
func TestElectionPausedLeaderProcessIsFenced(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path, resource := lockPath(t, "e"), "/fenced-resource" // the server is this test's own
	s := newSession(t, c.Servers())
	_, err := s.Client().Create(ctx, resource, nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^TestElectionHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+strings.Join([]string{c.ConnectString(), path, resource}, "|"))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := readLines(out)
	expectLine(t, lines, "LEADING")
	expectLine(t, lines, "WRITE ok")

	successor := campaignAsync(ctx, newElection(t, s, path), "successor")
	require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
	r := <-successor // the frozen leader's session expires on the server
	require.NoError(t, r.err)
	_, err = s.Client().Multi(ctx, r.t.Guard(), &zk.SetDataOp{Path: resource, Data: token(r.t), Version: -1})
	require.NoError(t, err)

	resumed := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
	fenced := 0
	for line := expectLine(t, lines, ""); !strings.HasPrefix(line, "DONE"); line = expectLine(t, lines, "") {
		require.NotEqual(t, "WRITE ok after-pause", line, "the frozen leader wrote after its successor was elected")
		if line == "WRITE rejected after-pause" {
			fenced++
		}
	}
	t.Logf("the resumed leader reported its term over %v after SIGCONT; %d writes of it were fenced meanwhile",
		time.Since(resumed).Round(time.Millisecond), fenced)
	data, _, err := s.Client().Get(ctx, resource)
	require.NoError(t, err)
	require.Equal(t, string(token(r.t)), string(data), "the resource holds the successor's write")
	require.NoError(t, cmd.Wait())
}

func token(t *zklock.Term) []byte { return []byte(strconv.FormatInt(t.Token(), 10)) }

// readLines forwards the lines of r.
func readLines(r io.Reader) <-chan string {
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// expectLine returns the next line, which must start with prefix.
func expectLine(t *testing.T, lines <-chan string, prefix string) string {
	t.Helper()
	select {
	case line, ok := <-lines:
		require.True(t, ok, "the candidate process ended early")
		require.True(t, strings.HasPrefix(line, prefix), "want %q, got %q", prefix, line)
		return line
	case <-time.After(30 * time.Second):
		t.Fatalf("no %q line from the candidate process", prefix)
	}
	return ""
}

// TestElectionHelperProcess is the candidate process of
// TestElectionPausedLeaderProcessIsFenced; it does nothing in a normal run.
// It leads, then writes its token to the resource with the term's guard
// every 20ms, printing each outcome, until its term ends; it prints DONE
// and exits. Writes sent after the loop noticed it had stalled for more than
// a session timeout (the process was frozen) are marked after-pause.
func TestElectionHelperProcess(t *testing.T) {
	cfg := os.Getenv(helperEnv)
	if cfg == "" {
		t.Skip("run by TestElectionPausedLeaderProcessIsFenced")
	}
	parts := strings.Split(cfg, "|")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(parts[0], ",")...),
		zklock.WithSessionTimeout(helperSession))
	if err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
	e, _ := zklock.NewElection(s, parts[1])
	term, err := e.Campaign(ctx, []byte("frozen"))
	if err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
	fmt.Println("LEADING", term.Token())
	frozen, last := "", time.Now()
	for ctx.Err() == nil {
		select {
		case <-term.Lost():
			fmt.Println("DONE", term.Err())
			os.Exit(0) // skip goleak: the session is abandoned on purpose
		default:
		}
		if time.Since(last) > helperSession {
			frozen = " after-pause" // this loop stalled: the process was frozen
		}
		last = time.Now()
		_, err := s.Client().Multi(ctx, term.Guard(), &zk.SetDataOp{Path: parts[2], Data: token(term), Version: -1})
		fmt.Printf("WRITE %s%s\n", map[bool]string{true: "ok", false: "rejected"}[err == nil], frozen)
		time.Sleep(20 * time.Millisecond)
	}
	os.Exit(1)
}
