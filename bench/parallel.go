package main

import (
	"errors"
	"sync"
)

// parallelism bounds how many sessions connect or close at once: enough to
// hide round trips, few enough not to stampede a server on two cores.
const parallelism = 16

// parallel calls f(0) ... f(n-1), at most parallelism at a time, and
// returns their errors joined.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, parallelism)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closers collects what to close; close closes everything in parallel.
type closers struct {
	mu  sync.Mutex
	fns []func()
}

func (c *closers) add(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fns = append(c.fns, f)
}

func (c *closers) close() {
	c.mu.Lock()
	fns := c.fns
	c.fns = nil
	c.mu.Unlock()
	_ = parallel(len(fns), func(i int) error { fns[i](); return nil })
}
