package zklock_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zklock/zklock"
)

// BenchmarkMultiLock compares, in one run, a MultiLock over 2 and 4 paths
// with the same paths taken one Mutex after the other (what a caller does
// without MultiLock) and with a single Mutex: uncontended (one client) and
// with 4 clients (each its own session) contending for the same paths.
// acq/s counts whole acquisitions (all paths held), so the ratios between
// rows are the cost of holding k locks at once.
func BenchmarkMultiLock(b *testing.B) {
	c := benchServer(b)
	for _, clients := range []int{1, 4} {
		ss := benchSessions(b, c, clients)
		for _, k := range []int{1, 2, 4} {
			root := fmt.Sprintf("/bench/multi-c%d-k%d", clients, k)
			paths := make([]string, k)
			for i := range paths {
				paths[i] = fmt.Sprintf("%s/p%d", root, i)
			}
			mutexes := func(s *zklock.Session, tag string) []*zklock.Mutex {
				ms := make([]*zklock.Mutex, k)
				for i, p := range paths {
					m, err := zklock.NewMutex(s, p, zklock.WithData([]byte(tag)))
					if err != nil {
						b.Fatal(err)
					}
					ms[i] = m
				}
				return ms
			}
			b.Run(fmt.Sprintf("clients=%d/paths=%d/mutexes", clients, k), func(b *testing.B) {
				per := make([][]*zklock.Mutex, clients)
				for i, s := range ss {
					per[i] = mutexes(s, "m")
				}
				measure(b, c, clients, func(ctx context.Context, i int) error {
					for _, m := range per[i] {
						if err := m.Lock(ctx); err != nil {
							return err
						}
					}
					for j := len(per[i]) - 1; j >= 0; j-- {
						if err := per[i][j].Unlock(ctx); err != nil {
							return err
						}
					}
					return nil
				})
			})
			if k == 1 {
				continue
			}
			b.Run(fmt.Sprintf("clients=%d/paths=%d/multilock", clients, k), func(b *testing.B) {
				per := make([]*zklock.MultiLock, clients)
				for i, s := range ss {
					ms := mutexes(s, "ml")
					parts := make([]zklock.Part, k)
					for j, m := range ms {
						parts[j] = m
					}
					ml, err := zklock.NewMultiLock(parts...)
					if err != nil {
						b.Fatal(err)
					}
					per[i] = ml
				}
				measure(b, c, clients, func(ctx context.Context, i int) error {
					if err := per[i].Lock(ctx); err != nil {
						return err
					}
					return per[i].Unlock(ctx)
				})
			})
		}
	}
}
