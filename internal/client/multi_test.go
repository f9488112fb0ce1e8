package client_test

import (
	"errors"
	"testing"

	"github.com/zklock/zklock/internal/client"
)

// TestMulti: a transaction of every kind of op applies as one and returns
// a result per op; a failing one applies nothing, names the op that
// failed, and marks the others rolled back.
func TestMulti(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	if _, _, err := c.Create(ctx, dir+"/old", []byte("x"), client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	res, err := c.Multi(ctx,
		client.CreateOp(dir+"/seq-", []byte("a"), client.ModeEphemeralSequential, open),
		client.CreateOp(dir+"/box", nil, client.ModeContainer, open),
		client.SetOp(dir+"/old", []byte("y"), 0),
		client.CheckOp(dir+"/old", 1),
		client.DeleteOp(dir+"/old", 1),
	)
	if err != nil || len(res) != 5 {
		t.Fatalf("multi: %v %v", res, err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Errorf("op %d: %v", i, r.Err)
		}
	}
	if len(res[0].Path) != len(dir+"/seq-")+10 {
		t.Errorf("sequential create in multi named %q", res[0].Path)
	}
	// ZooKeeper 3.8.0 answers create2 inside a multi without the Stat
	// (ZOOKEEPER-4026, fixed in 3.8.2); a container create has its Stat.
	if res[1].Path != dir+"/box" || res[1].Stat.Czxid == 0 {
		t.Errorf("container create in multi: %+v", res[1])
	}
	if res[2].Stat.Version != 1 {
		t.Errorf("set in multi: stat %+v", res[2].Stat)
	}
	if _, ok, _ := c.Exists(ctx, dir+"/old"); ok {
		t.Error("the multi's delete was not applied")
	}

	res, err = c.Multi(ctx,
		client.CreateOp(dir+"/new", nil, client.ModePersistent, open),
		client.CheckOp(dir+"/box", 5),
		client.CreateOp(dir+"/new2", nil, client.ModePersistent, open),
	)
	var ze *client.Error
	if !errors.Is(err, client.ErrBadVersion) || !errors.As(err, &ze) || ze.Op != "multi" || ze.Path != dir+"/box" {
		t.Fatalf("failed multi: %v", err)
	}
	if len(res) != 3 || !errors.Is(res[0].Err, client.ErrRolledBack) ||
		!errors.Is(res[1].Err, client.ErrBadVersion) || !errors.Is(res[2].Err, client.ErrRolledBack) {
		t.Fatalf("failed multi's results: %+v", res)
	}
	if _, ok, _ := c.Exists(ctx, dir+"/new"); ok {
		t.Error("an op of the failed multi was applied")
	}
	if _, err := c.Multi(ctx, client.CreateOp("bad", nil, client.ModePersistent, open)); !errors.Is(err, client.ErrBadArguments) {
		t.Errorf("multi with a relative path: %v", err)
	}
	if res, err := c.Multi(ctx); err != nil || len(res) != 0 {
		t.Errorf("empty multi: %v %v", res, err)
	}
}
