package zk_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// A Session's Client reads and writes nodes outside the recipes.
func ExampleClient() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	name, err := c.Create(ctx, "/example-client-config", []byte("v1"), zk.ModePersistent)
	fmt.Println("created:", name, err)
	st, err := c.Set(ctx, name, []byte("v2"), 0) // only at version 0
	fmt.Println("set: version", st.Version, err)
	_, err = c.Set(ctx, name, []byte("v3"), 0)
	fmt.Println("stale version:", errors.Is(err, zk.ErrBadVersion))
	data, _, err := c.Get(ctx, name)
	fmt.Println("get:", string(data), err)
	fmt.Println("delete:", c.Delete(ctx, name, -1))
	_, _, err = c.Get(ctx, name)
	fmt.Println("gone:", errors.Is(err, zk.ErrNoNode))
	// Output:
	// created: /example-client-config <nil>
	// set: version 1 <nil>
	// stale version: true
	// get: v2 <nil>
	// delete: <nil>
	// gone: true
}

func ExampleStat() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	name, err := c.Create(ctx, "/example-stat-", nil, zk.ModeEphemeralSequential)
	if err != nil {
		fmt.Println(err)
		return
	}
	st, ok, err := c.Exists(ctx, name)
	fmt.Println("exists:", ok, err)
	fmt.Println("ephemeral of this session:", st.EphemeralOwner == s.SessionID())
	fmt.Println("data version:", st.Version, "children:", st.NumChildren)
	// Output:
	// exists: true <nil>
	// ephemeral of this session: true
	// data version: 0 children: 0
}

func ExampleCreateMode() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	if _, err := c.Create(ctx, "/example-modes", nil, zk.ModeContainer); err != nil {
		fmt.Println(err)
		return
	}
	a, _ := c.Create(ctx, "/example-modes/job-", nil, zk.ModeEphemeralSequential)
	b, _ := c.Create(ctx, "/example-modes/job-", nil, zk.ModeEphemeralSequential)
	fmt.Println("sequential names increase:", a < b)
	// Output:
	// sequential names increase: true
}

func ExampleWatch() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	name, err := c.Create(ctx, "/example-watched", []byte("a"), zk.ModeEphemeral)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _, w, err := c.GetW(ctx, name)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.Set(ctx, name, []byte("b"), -1); err != nil {
		fmt.Println(err)
		return
	}
	<-w.Done()
	fmt.Println(w.Event().Type, w.Event().Path)
	// Output:
	// data changed /example-watched
}

func ExampleNodeEvent() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	// A watch on a node that does not exist yet fires at its creation.
	_, ok, w, err := c.ExistsW(ctx, "/example-node-event")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("exists:", ok)
	if _, err := c.Create(ctx, "/example-node-event", nil, zk.ModeEphemeral); err != nil {
		fmt.Println(err)
		return
	}
	<-w.Done()
	ev := w.Event()
	fmt.Println(ev.Type == zk.NodeCreated, ev.Path, ev.Err)
	// Output:
	// exists: false
	// true /example-node-event <nil>
}

func ExampleNodeEventType() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _, w, err := s.Client().ChildrenW(ctx, "/")
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Close() // the Session closes: the watch ends without a change
	<-w.Done()
	fmt.Println(w.Event().Type, errors.Is(w.Event().Err, zklock.ErrSessionClosed))
	fmt.Println(zk.NodeDeleted, zk.NodeChildrenChanged)
	// Output:
	// not watching true
	// deleted children changed
}

func ExampleACL() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	// Anyone may read; only the digest identity app:secret may change it.
	acl := append(zk.WorldACL(zk.PermRead), zk.DigestACL(zk.PermAll, "app", "secret")...)
	name, err := c.Create(ctx, "/example-acl", []byte("x"), zk.ModeEphemeral, acl...)
	if err != nil {
		fmt.Println(err)
		return
	}
	got, _, err := c.GetACL(ctx, name)
	fmt.Println(len(got), got[0].Scheme, got[1].Scheme, err)
	_, err = c.Set(ctx, name, []byte("y"), -1)
	fmt.Println("write refused:", errors.Is(err, zk.ErrNoAuth))
	// Output:
	// 2 world digest <nil>
	// write refused: true
}

// A fenced write: the check of the lock's node and the write commit
// together, or not at all.
func ExampleOp() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, err := zklock.NewMutex(s, "/example-op/lock")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	ops := []zk.Op{
		m.Guard(),
		&zk.CreateOp{Path: "/example-op/state", Data: []byte("1"), Mode: zk.ModePersistent},
	}
	_, err = s.Client().Multi(ctx, ops...)
	fmt.Println("while holding:", err)
	if err := m.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	_, err = s.Client().Multi(ctx, ops...) // the same guard, after Unlock
	fmt.Println("after Unlock:", errors.Is(err, zk.ErrNoNode))
	_, _, err = s.Client().Get(ctx, "/example-op/state")
	fmt.Println("written once:", err)
	// Output:
	// while holding: <nil>
	// after Unlock: true
	// written once: <nil>
}

func ExampleCheckOp() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	if _, err := c.Create(ctx, "/example-check", []byte("0"), zk.ModeEphemeral); err != nil {
		fmt.Println(err)
		return
	}
	// Write /example-check only if nobody changed it since version 0 was read.
	_, err = s.Client().Multi(ctx, &zk.CheckOp{Path: "/example-check", Version: 0},
		&zk.SetDataOp{Path: "/example-check", Data: []byte("1"), Version: -1})
	fmt.Println("at version 0:", err)
	_, err = s.Client().Multi(ctx, &zk.CheckOp{Path: "/example-check", Version: 0},
		&zk.SetDataOp{Path: "/example-check", Data: []byte("2"), Version: -1})
	fmt.Println("no longer:", errors.Is(err, zk.ErrBadVersion))
	// Output:
	// at version 0: <nil>
	// no longer: true
}

func ExampleCreateOp() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := s.Client().Multi(ctx,
		&zk.CreateOp{Path: "/example-create-op", Mode: zk.ModeContainer},
		&zk.CreateOp{Path: "/example-create-op/item-", Data: []byte("x"), Mode: zk.ModeEphemeralSequential})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res[0].Path, len(res[1].Path) == len("/example-create-op/item-0000000000"))
	// Output:
	// /example-create-op true
}

func ExampleSetDataOp() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	for _, p := range []string{"/example-set-a", "/example-set-b"} {
		if _, err := c.Create(ctx, p, []byte("old"), zk.ModeEphemeral); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Both or neither.
	res, err := s.Client().Multi(ctx,
		&zk.SetDataOp{Path: "/example-set-a", Data: []byte("new"), Version: -1},
		&zk.SetDataOp{Path: "/example-set-b", Data: []byte("new"), Version: -1})
	fmt.Println(res[0].Stat.Version, res[1].Stat.Version, err)
	// Output:
	// 1 1 <nil>
}

func ExampleDeleteOp() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	if _, err := c.Create(ctx, "/example-delete-op", nil, zk.ModeEphemeral); err != nil {
		fmt.Println(err)
		return
	}
	res, err := s.Client().Multi(ctx,
		&zk.DeleteOp{Path: "/example-delete-op", Version: -1},
		&zk.DeleteOp{Path: "/example-delete-op-missing", Version: -1})
	fmt.Println(errors.Is(err, zk.ErrNoNode))
	fmt.Println(errors.Is(res[0].Err, zk.ErrRolledBack), errors.Is(res[1].Err, zk.ErrNoNode))
	_, ok, _ := c.Exists(ctx, "/example-delete-op")
	fmt.Println("still there:", ok)
	// Output:
	// true
	// true true
	// still there: true
}

func ExampleOpResult() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := s.Client().Multi(ctx,
		&zk.CreateOp{Path: "/example-op-result", Data: []byte("a"), Mode: zk.ModeEphemeral},
		&zk.SetDataOp{Path: "/example-op-result", Data: []byte("b"), Version: 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res {
		fmt.Printf("path %q, data version %d, err %v\n", r.Path, r.Stat.Version, r.Err)
	}
	// Output:
	// path "/example-op-result", data version 0, err <nil>
	// path "", data version 1, err <nil>
}

func ExampleState() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.State())
	fmt.Println(zk.StateLost, zk.StateExpired)
	s.Close()
	fmt.Println(s.State())
	_ = ctx
	// Output:
	// connected
	// lost expired
	// closed
}

func ExampleEvent() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	events, err := s.Subscribe(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Close() // a transition: every subscriber sees it
	for ev := range events {
		fmt.Println("event:", ev.State, ev.SessionID != 0)
	}
	// Output:
	// event: closed true
}

// Writing under a lock: the hold's Guard first, then the writes. They
// commit together while the lock's node stands, or not at all; the Guard
// of nothing held is nil, and Multi refuses it without sending anything.
func ExampleClient_Multi() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c := s.Client()
	if _, err := c.Create(ctx, "/example-multi-report", nil, zk.ModePersistent); err != nil {
		fmt.Println(err)
		return
	}
	defer c.Delete(ctx, "/example-multi-report", -1)
	m, err := zklock.NewMutex(s, "/example-multi/lock")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.Multi(ctx, m.Guard(), &zk.SetDataOp{Path: "/example-multi-report", Data: []byte("x"), Version: -1})
	fmt.Println("not holding:", errors.Is(err, zk.ErrInvalidArgument))
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.Multi(ctx, m.Guard(), &zk.SetDataOp{Path: "/example-multi-report", Data: []byte("done"), Version: -1})
	fmt.Println("holding:", err, "version", res[1].Stat.Version)
	if err := m.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// Output:
	// not holding: true
	// holding: <nil> version 1
}
