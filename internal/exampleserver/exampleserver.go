// Package exampleserver is the ZooKeeper of the testable examples of
// package zklock and package zk: the examples take their servers from
// ZK_SERVERS, as the README program does, so that each can be copied as it
// is, and a test binary's TestMain points ZK_SERVERS here with Start.
package exampleserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"github.com/zklock/zklock/zktest"
)

// exampleServers: a listener on 127.0.0.1 that starts a throwaway ZooKeeper
// on the first connection and forwards every connection to it. A run that
// includes no example starts no server. The examples share the server,
// each on paths of its own.
var exampleServers struct {
	ln    net.Listener
	once  sync.Once
	addr  string // the ZooKeeper's, once started
	err   error
	close func() error
	wg    sync.WaitGroup

	mu      sync.Mutex
	conns   []net.Conn
	stopped bool
}

// Start opens the listener and sets ZK_SERVERS to it; it
// overrides a ZK_SERVERS of the environment, which names the developer's
// own server.
func Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	exampleServers.ln = ln
	exampleServers.wg.Add(1)
	go func() {
		defer exampleServers.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			forwardExample(c)
		}
	}()
	return os.Setenv("ZK_SERVERS", ln.Addr().String())
}

// forwardExample starts the ZooKeeper if it is not running yet, and
// forwards c to it. A ZooKeeper that does not start ends the test binary:
// an example has no *testing.T to fail.
func forwardExample(c net.Conn) {
	e := &exampleServers
	e.once.Do(func() {
		zk, err := zktest.Launch(context.Background(), 1)
		if err != nil {
			e.err = err
			return
		}
		e.addr, e.close = zk.Servers()[0], zk.Close
	})
	if e.err != nil {
		fmt.Fprintln(os.Stderr, "examples' ZooKeeper:", e.err)
		os.Exit(1)
	}
	up, err := net.Dial("tcp", e.addr)
	if err != nil {
		c.Close()
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		c.Close()
		up.Close()
		return
	}
	e.conns = append(e.conns, c, up)
	e.wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer e.wg.Done()
		_, _ = io.Copy(dst, src)
		dst.Close() // the other way ends too
		src.Close()
	}
	go pipe(up, c)
	go pipe(c, up)
}

// Stop closes the listener and every forwarded connection,
// then stops the ZooKeeper if it was started.
func Stop() {
	e := &exampleServers
	if e.ln == nil {
		return
	}
	e.ln.Close()
	e.mu.Lock()
	e.stopped = true
	for _, c := range e.conns {
		c.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
	if e.close != nil {
		if err := e.close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}
