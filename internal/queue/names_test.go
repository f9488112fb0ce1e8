package queue

import (
	"crypto/rand"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind string
		seq  int32
		ok   bool
	}{
		{"_c_2f0a1b3c-9d8e-4f7a-8b6c-5d4e3f2a1b0c-lock-0000000042", KindLock, 42, true},
		{"_c_2f0a1b3c-9d8e-4f7a-8b6c-5d4e3f2a1b0c-lock--000000007", KindLock, -7, true},
		{"09720f3b1e2d4c5a__lock__0000000003", KindKazooLock, 3, true},
		{"abc__rlock__0000000004", KindKazooRLock, 4, true},
		{"_c_x-__READ__0000000001", KindRead, 1, true},
		{"_c_x-__WRIT__2147483647", KindWrite, math.MaxInt32, true},
		{"_c_x-lease-0000000009", KindLease, 9, true},
		{"_c_x-latch-0000000010", KindLatch, 10, true},
		{"lock-0000000001", KindLock, 1, true},
		{"lock-000000001", "", 0, false},   // 9 characters
		{"lock-00000000012", "", 0, false}, // 11 characters
		{"lock-00000x0001", "", 0, false},  // not a number
		{"lock-9999999999", "", 0, false},  // beyond int32
		{"locks", "", 0, false},            // a semaphore's child
		{"leases", "", 0, false},           // a semaphore's child
		{"random-node", "", 0, false},      // unknown
		{"", "", 0, false},                 // empty
		{"lock--00000000-", "", 0, false},  // sign in the wrong place
		{"_c_x-lock-lock-0000000005", KindLock, 5, true},
	} {
		c, ok := Parse(tc.name)
		require.Equal(t, tc.ok, ok, tc.name)
		if ok {
			require.Equal(t, tc.kind, c.Kind, tc.name)
			require.Equal(t, tc.seq, c.Seq, tc.name)
		}
	}
}

func TestSortOrdersNumericallyAcrossLibrariesAndWrap(t *testing.T) {
	names := []string{
		"_c_b-lock-0000000010",
		"kazoo__lock__0000000002",
		"_c_a-lock-0000000001",
		"unrelated",
		"_c_c-lease-0000000000", // another kind: not a contender here
		"_c_d-lock-0000000100",
	}
	cs := Sort(names, KindLock, KindKazooLock)
	got := []string{}
	for _, c := range cs {
		got = append(got, c.Name)
	}
	require.Equal(t, []string{"_c_a-lock-0000000001", "kazoo__lock__0000000002", "_c_b-lock-0000000010", "_c_d-lock-0000000100"}, got)

	wrapped := Sort([]string{"x-lock--2147483648", "x-lock-2147483646", "x-lock-2147483647"}, KindLock)
	require.Equal(t, "x-lock-2147483646", wrapped[0].Name)
	require.Equal(t, "x-lock--2147483648", wrapped[2].Name, "numbers after the wrap sort last")
}

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"/a", "/a/b-c_d.e", "/zookeeperx", "/ünïcode"} {
		require.NoError(t, CheckPath(p), p)
	}
	for _, p := range []string{"", "a", "/", "/a/", "/a//b", "/a/./b", "/a/..", "/zookeeper", "/zookeeper/x", "/a\x00", "/a\u009f", "/a\ufff5", "/\xff"} {
		require.Error(t, CheckPath(p), p)
	}
	require.Equal(t, []string{"/a", "/a/b"}, Parents("/a/b/c"))
}

func TestNewProtectedPrefix(t *testing.T) {
	p := NewProtectedPrefix()
	require.Len(t, p, 40, "Curator's protected prefix is 40 characters")
	require.Equal(t, "_c_", p[:3])
	require.Equal(t, byte('4'), p[3+14], "version 4 UUID")
	require.NotEqual(t, p, NewProtectedPrefix())
}

// FuzzParseAndSort: parsing never panics, a parsed name's suffix round-trips,
// and Sort returns a permutation of the contenders in non-decreasing order.
func FuzzParseAndSort(f *testing.F) {
	for _, s := range []string{"_c_a-lock-0000000001", "k__lock__0000000002", "x-__READ__-000000001", "lease-", "lock-lock-", ""} {
		f.Add(s, "_c_b-lock-0000000003")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, n := range []string{a, b} {
			if got, want := fmt.Sprint(Parse(n)), fmt.Sprint(parseReference(n)); got != want {
				t.Fatalf("Parse(%q) = %s, reference %s", n, got, want)
			}
			if c, ok := Parse(n); ok {
				v10, err10 := strconv.ParseInt(n[len(n)-10:], 10, 32)
				ok10 := err10 == nil && int32(v10) == c.Seq
				ok11 := false
				if len(n) >= 11 && n[len(n)-11] == '-' {
					v11, err11 := strconv.ParseInt(n[len(n)-11:], 10, 32)
					ok11 = err11 == nil && int32(v11) == c.Seq
				}
				if !ok10 && !ok11 {
					t.Fatalf("%q parsed as %d", n, c.Seq)
				}
			}
		}
		cs := Sort([]string{a, b, "_c_z-lock-0000000005"}, KindLock, KindKazooLock)
		for i := 1; i < len(cs); i++ {
			if cs[i-1].Seq > cs[i].Seq && !(cs[i-1].Seq > 0 && cs[i].Seq < 0) {
				t.Fatalf("out of order: %v", cs)
			}
		}
	})
}

// parseReference is the obvious, slower statement of Parse: some occurrence
// of a kind followed by nothing but a valid sequence suffix.
func parseReference(name string) (Contender, bool) {
	for _, k := range kinds {
		for i := strings.LastIndex(name, k); i >= 0; i = strings.LastIndex(name[:i], k) {
			if seq, ok := parseSeq(name[i+len(k):]); ok {
				return Contender{Name: name, Kind: k, Seq: seq}, true
			}
		}
	}
	return Contender{}, false
}

// scanReference is Scan stated through Sort: sort, find ours, walk back to
// the nearest contender that blocks.
func scanReference(names []string, name string, blocks func(Contender) bool, accept ...string) (Scanned, bool) {
	cs := Sort(names, accept...)
	i := slices.IndexFunc(cs, func(c Contender) bool { return c.Name == name })
	if i < 0 {
		return Scanned{}, false
	}
	s := Scanned{Ours: cs[i], First: cs[0]}
	for j := i - 1; j >= 0; j-- {
		if blocks == nil || blocks(cs[j]) {
			if !s.Blocked {
				s.Blocker, s.Blocked = cs[j], true
			}
			s.Blockers++
		}
	}
	return s, true
}

// FuzzScan: Scan agrees with sorting, for listings drawn from the fuzz
// input: kinds (Curator, Kazoo, one not accepted), sequence numbers near 0,
// near the wrap, negative, and ties between a writer and a reader.
func FuzzScan(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5}, uint8(2), false)
	f.Add([]byte{0x80, 0x81, 0x02, 0x43, 0xc4}, uint8(1), true)
	f.Add([]byte{0x11, 0x11, 0x91, 0x21}, uint8(0), true)
	kindsOf := []string{KindLock, KindKazooLock, KindWrite, KindRead, KindLease}
	seqs := []int32{0, 1, 2, 3, math.MaxInt32 - 1, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, -5, 7}
	f.Fuzz(func(t *testing.T, raw []byte, pick uint8, readers bool) {
		if len(raw) == 0 || len(raw) > 64 {
			return
		}
		names := make([]string, len(raw))
		for i, b := range raw {
			seq := fmt.Sprintf("%010d", seqs[int(b&0x0f)%len(seqs)])
			names[i] = fmt.Sprintf("_c_%02d-%s%s", i, kindsOf[int(b>>4)%len(kindsOf)], seq)
		}
		accept := []string{KindLock, KindKazooLock}
		var blocks func(Contender) bool
		if readers {
			accept = []string{KindWrite, KindRead}
			blocks = func(c Contender) bool { return c.Kind == KindWrite }
		}
		name := names[int(pick)%len(names)]
		got, gotOK := Scan(names, name, blocks, accept...)
		want, wantOK := scanReference(names, name, blocks, accept...)
		if gotOK != wantOK || got != want {
			t.Fatalf("Scan(%q, %q) = %+v %v, by sorting %+v %v", names, name, got, gotOK, want, wantOK)
		}
	})
}

func TestLongestNode(t *testing.T) {
	for _, kind := range []string{KindLock, KindRead, KindWrite} {
		name := NewProtectedPrefix() + kind + "0000000001"
		require.LessOrEqual(t, len("/a/b/"+name), LongestNode("/a/b", kind), kind)
	}
	lease := "/a/b/leases/" + NewProtectedPrefix() + KindLease + "0000000001"
	require.LessOrEqual(t, len(lease), LongestNode("/a/b", KindLease))
	lock := "/a/b/locks/" + NewProtectedPrefix() + KindLock + "0000000001"
	require.LessOrEqual(t, len(lock), LongestNode("/a/b", KindLease))
}

func TestForeign(t *testing.T) {
	lock := []string{KindLock, KindKazooLock}
	rw := []string{KindRead, KindWrite}
	sem := []string{LocksChild, LeasesChild}
	for _, tc := range []struct {
		names  []string
		accept []string
		want   string // the name found, "" for none
	}{
		{[]string{"_c_a-lock-0000000001", "k__lock__0000000002", "unrelated", "sub"}, lock, ""},
		{[]string{"_c_a-lock-0000000001", "_c_b-__WRIT__0000000002"}, lock, "_c_b-__WRIT__0000000002"},
		{[]string{"_c_b-__READ__0000000002"}, lock, "_c_b-__READ__0000000002"},
		{[]string{"leases"}, lock, "leases"},
		{[]string{"locks", "leases"}, rw, "locks"},
		{[]string{"_c_a-latch-0000000001"}, lock, "_c_a-latch-0000000001"},
		{[]string{"k__rlock__0000000001"}, lock, "k__rlock__0000000001"},
		{[]string{"_c_a-__READ__0000000001", "_c_b-__WRIT__0000000002"}, rw, ""},
		{[]string{"_c_a-lock-0000000001"}, rw, "_c_a-lock-0000000001"},
		{[]string{"k__lock__0000000001"}, rw, "k__lock__0000000001"},
		{[]string{"locks", "leases", "unrelated"}, sem, ""},
		{[]string{"locks", "_c_a-lock-0000000001"}, sem, "_c_a-lock-0000000001"},
		{[]string{"leases", "_c_a-__WRIT__0000000001"}, sem, "_c_a-__WRIT__0000000001"},
		{nil, lock, ""},
	} {
		c, ok := Foreign(tc.names, tc.accept)
		require.Equal(t, tc.want != "", ok, "%v", tc.names)
		require.Equal(t, tc.want, c.Name, "%v", tc.names)
	}
}

func TestPrimitivePath(t *testing.T) {
	for node, want := range map[string]string{
		"/a/lock/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-lock-0000000001":        "/a/lock",
		"/a/sem/leases/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-lease-0000000003": "/a/sem",
		"/a/rw/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-__READ__0000000002":       "/a/rw",
	} {
		if got := PrimitivePath(node); got != want {
			t.Errorf("PrimitivePath(%s) = %s, want %s", node, got, want)
		}
	}
}

// The prefix is formatted without fmt: one allocation, the string (it
// was 7 with fmt.Sprintf, about a sixth of an acquisition's allocations
// on a shared session), and the same text as the UUID format Curator
// writes, checked against fmt on fixed and random bytes.
func TestProtectedPrefixFormat(t *testing.T) {
	ref := func(b [16]byte) string {
		return fmt.Sprintf("%s%x-%x-%x-%x-%x-", ProtectedPrefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	}
	cases := [][16]byte{{}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe}}
	for range 100 {
		var b [16]byte
		_, _ = rand.Read(b[:])
		cases = append(cases, b)
	}
	for _, b := range cases {
		if got, want := protectedPrefix(b), ref(b); got != want {
			t.Fatalf("protectedPrefix(%x) = %q, want %q", b, got, want)
		}
	}
	want := 1.0
	if raceEnabled {
		want = 2 // the race detector moves the UUID's bytes to the heap
	}
	if n := testing.AllocsPerRun(100, func() { _ = NewProtectedPrefix() }); n > want {
		t.Errorf("NewProtectedPrefix allocates %.0f times, want at most %.0f", n, want)
	}
}

// A held lock keeps its node's name only as the tail of its path: Node
// parses it from there, without a second string.
func TestHeldNode(t *testing.T) {
	path := "/a/locks/" + NewProtectedPrefix() + KindLock + "0000000007"
	h := &Held{Tracked: Tracked{Path: path}}
	got := h.Node()
	require.Equal(t, Contender{Name: path[strings.LastIndexByte(path, '/')+1:], Kind: KindLock, Seq: 7}, got)
	require.Equal(t, unsafe.StringData(path[len(path)-len(got.Name):]), unsafe.StringData(got.Name), "the name is not the path's tail")
}
