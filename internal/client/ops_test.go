package client_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/client"
)

// TestNodeOps: create (its Stat in the same reply), exists, get, set with
// and without the right version, children with their parent's Stat,
// delete, sync, and the ACL requests, against a real server.
func TestNodeOps(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	p := dir + "/a"

	name, st, err := c.Create(ctx, p, []byte("one"), client.ModePersistent, open)
	if err != nil || name != p {
		t.Fatalf("create: %q, %v", name, err)
	}
	if st.Czxid == 0 || st.Czxid != st.Mzxid || st.Version != 0 || st.DataLength != 3 || st.EphemeralOwner != 0 {
		t.Fatalf("create's stat: %+v", st)
	}
	est, ok, err := c.Exists(ctx, p)
	if err != nil || !ok || est != st {
		t.Fatalf("exists: %+v %v %v; create said %+v", est, ok, err, st)
	}
	if _, ok, err := c.Exists(ctx, dir+"/none"); err != nil || ok {
		t.Fatalf("exists of a missing node: %v %v", ok, err)
	}
	data, gst, err := c.Get(ctx, p)
	if err != nil || string(data) != "one" || gst != st {
		t.Fatalf("get: %q %+v %v", data, gst, err)
	}
	sst, err := c.Set(ctx, p, []byte("two"), st.Version)
	if err != nil || sst.Version != 1 || sst.Mzxid <= st.Mzxid || sst.Czxid != st.Czxid {
		t.Fatalf("set: %+v %v", sst, err)
	}
	if _, err := c.Set(ctx, p, []byte("three"), st.Version); !errors.Is(err, client.ErrBadVersion) {
		t.Fatalf("set at a stale version: %v, want ErrBadVersion", err)
	}
	if data, _, err := c.Get(ctx, p); err != nil || string(data) != "two" {
		t.Fatalf("get after set: %q %v", data, err)
	}
	for _, n := range []string{"b", "c"} {
		if _, _, err := c.Create(ctx, dir+"/"+n, nil, client.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
	}
	names, dst, err := c.Children(ctx, dir)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"a", "b", "c"}) || dst.NumChildren != 3 {
		t.Fatalf("children: %v %+v %v", names, dst, err)
	}
	if err := c.Sync(ctx, dir); err != nil {
		t.Fatalf("sync: %v", err)
	}
	acl, ast, err := c.GetACL(ctx, p)
	if err != nil || !slices.Equal(acl, open) || ast.Aversion != 0 {
		t.Fatalf("get acl: %v %+v %v", acl, ast, err)
	}
	readOnly := client.WorldACL(client.PermRead | client.PermDelete)
	if _, err := c.SetACL(ctx, p, readOnly, 0); err != nil {
		t.Fatalf("set acl: %v", err)
	}
	if _, err := c.Set(ctx, p, nil, -1); !errors.Is(err, client.ErrNoAuth) {
		t.Fatalf("set on a read-only node: %v, want ErrNoAuth", err)
	}
	if err := c.Delete(ctx, p, 0); !errors.Is(err, client.ErrBadVersion) {
		t.Fatalf("delete at a stale version: %v", err)
	}
	if err := c.Delete(ctx, p, 1); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, _, err := c.Get(ctx, p); !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("get after delete: %v", err)
	}
}

// TestEmptyAndNilData: a node created with nil data reads back empty; an
// empty value and a large one survive a round trip.
func TestEmptyAndNilData(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	big := bytes.Repeat([]byte("z"), 512<<10)
	for i, data := range [][]byte{nil, {}, []byte("x"), big} {
		p := dir + "/" + strings.Repeat("n", i+1)
		if _, _, err := c.Create(ctx, p, data, client.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
		got, st, err := c.Get(ctx, p)
		if err != nil || !bytes.Equal(got, data) || int(st.DataLength) != len(data) {
			t.Fatalf("value %d: got %d bytes (stat %d), %v; want %d", i, len(got), st.DataLength, err, len(data))
		}
	}
}
