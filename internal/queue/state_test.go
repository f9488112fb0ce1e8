package queue_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// brief is a state in one line: kind/limit, then the holders' and the
// waiters' node names.
func brief(s queue.State) string {
	names := func(ns []queue.Node) string {
		var out []string
		for _, n := range ns {
			out = append(out, path.Base(n.Path))
		}
		return strings.Join(out, ",")
	}
	return fmt.Sprintf("%s/%d %s | %s", s.Kind, s.Limit, names(s.Holders), names(s.Waiting))
}

// ReadState reads each layout: who holds and who waits, the kind and the
// limit, as status shows them.
func TestReadState(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  string // of the lock path
		nodes []string
		kind  errs.Kind
		want  string
	}{
		{"missing", "", nil, "", "/0  | "},
		{"mutex", "", []string{"lock-0000000002", "lock-0000000001", "stray"}, "",
			"mutex/0 lock-0000000001 | lock-0000000002"},
		{"kazoo lock", "", []string{"__lock__0000000001", "__lock__0000000002"}, "",
			"mutex/0 __lock__0000000001 | __lock__0000000002"},
		{"readers ahead of a writer", "", []string{"__READ__0000000001", "__READ__0000000002", "__WRIT__0000000003", "__READ__0000000004"}, "",
			"rwmutex/0 __READ__0000000001,__READ__0000000002 | __WRIT__0000000003,__READ__0000000004"},
		{"a downgraded writer", "", []string{"__WRIT__0000000001", "a__READ__0000000001", "__READ__0000000002"}, "",
			"rwmutex/0 __WRIT__0000000001,a__READ__0000000001 | __READ__0000000002"},
		{"kazoo read-write", "", []string{"__rlock__0000000001", "__lock__0000000002"}, "",
			"rwmutex/0 __rlock__0000000001 | __lock__0000000002"},
		{"permits", "", []string{"x-1of3permit-0000000001", "x-2of3permit-0000000002", "x-1of3permit-0000000003"}, "",
			"semaphore_permit/3 x-1of3permit-0000000001,x-2of3permit-0000000002 | x-1of3permit-0000000003"},
		{"leases", "2", []string{"leases/lease-0000000001", "leases/lease-0000000002", "leases/lease-0000000003", "locks/lock-0000000001"}, "",
			"semaphore/2 lease-0000000001,lease-0000000002 | lock-0000000001"},
		{"kind given, nobody there", "", nil, errs.Semaphore, "semaphore/0  | "},
		{"a mutex read as given", "", []string{"lock-0000000001", "__READ__0000000002"}, errs.Mutex,
			"mutex/0 lock-0000000001 | "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := queuetest.NewServer()
			c := s.Connect()
			ctx := testCtx(t)
			if tc.nodes != nil || tc.data != "" {
				mkdirs(t, c, dir)
			}
			if tc.data != "" {
				must(t, c.SetData(ctx, dir, []byte(tc.data), -1))
			}
			for _, n := range tc.nodes {
				mkdirs(t, c, path.Dir(dir+"/"+n))
				_, _, err := c.CreateEphemeral(ctx, dir+"/"+n, nil)
				must(t, err)
			}
			st, err := queue.ReadState(ctx, c, dir, tc.kind)
			must(t, err)
			if got := brief(st); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func mkdirs(t *testing.T, c *queuetest.Conn, p string) {
	t.Helper()
	for _, q := range append(queue.Parents(p), p) {
		must(t, c.CreateContainer(t.Context(), q))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Watch puts each change, and sets data watches on the path and the
// holder only: never on a waiter's node.
func TestWatchStateWatchesNoWaiter(t *testing.T) {
	s, c := setup(t)
	w := s.Connect()
	ctx, cancel := context.WithCancel(testCtx(t))
	states := make(chan queue.State, 16)
	done := make(chan error, 1)
	go func() {
		done <- queue.Watch(ctx, w, dir, "", func(context.Context) {},
			func(st queue.State) { states <- st }, func(err error) { t.Errorf("watch: %v", err) })
	}()
	want := func(b string) {
		t.Helper()
		select {
		case st := <-states:
			if brief(st) != b {
				t.Fatalf("state %q, want %q", brief(st), b)
			}
		case <-ctx.Done():
			t.Fatalf("no state %q", b)
		}
	}
	want("/0  | ")
	for i := 1; i <= 3; i++ {
		_, _, err := c.CreateEphemeral(ctx, fmt.Sprintf("%s/lock-%010d", dir, i), nil)
		must(t, err)
		names := []string{"lock-0000000001", "lock-0000000002", "lock-0000000003"}
		want("mutex/0 lock-0000000001 | " + strings.Join(names[1:i], ","))
	}
	// The holder's watch is set after its state is put: deleted before
	// that, its node would never be watched (1 failure in a loaded make
	// test: data watches on ["l" "lock-0000000002"]).
	await(t, s, "a watch on the holder", func() bool { return s.Watching(dir+"/lock-0000000001") > 0 })
	must(t, c.Delete(ctx, dir+"/lock-0000000001"))
	want("mutex/0 lock-0000000002 | lock-0000000003")
	// The new holder's watch is set after its state is put.
	await(t, s, "a watch on the new holder", func() bool { return s.Watching(dir+"/lock-0000000002") > 0 })
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Watch returned %v, want context.Canceled", err)
	}
	var watched []string
	for _, wt := range s.Watches() {
		if wt.Session == w.SessionID() {
			watched = append(watched, path.Base(wt.Path))
		}
	}
	slices.Sort(watched)
	watched = slices.Compact(watched)
	if want := []string{"l", "lock-0000000001", "lock-0000000002"}; !slices.Equal(watched, want) {
		t.Errorf("data watches on %q, want %q", watched, want)
	}
}
