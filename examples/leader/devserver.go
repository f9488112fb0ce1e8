package main

import (
	"context"
	"time"

	"github.com/zklock/zklock/zktest"
)

// devServer starts a throwaway standalone ZooKeeper from the local
// installation the tests use (zktest.Launch finds it), and returns its
// address and a function that stops it and removes its files. On Linux the
// server is also killed should this process die first.
func devServer() (addrs []string, stop func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := zktest.Launch(ctx, 1)
	if err != nil {
		return nil, nil, err
	}
	return c.Servers(), func() { _ = c.Close() }, nil
}
