package queue

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// listing is a queue of n lock nodes in the order a server lists them:
// ZooKeeper keeps children in a hash set, so not in sequence order.
func listing(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%s%010d", NewProtectedPrefix(), KindLock, i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(n, func(i, j int) { names[i], names[j] = names[j], names[i] })
	return names
}

// BenchmarkWake1000 is what a waiter woken in a queue of 1000 pays to find
// what blocks it: Scan (now), against sorting the listing (before).
func BenchmarkWake1000(b *testing.B) {
	names := listing(1000)
	ours := fmt.Sprintf("%s%010d", KindLock, 999)
	for _, n := range names {
		if n[len(n)-len(ours):] == ours {
			ours = n
		}
	}
	b.Run("scan", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Scan(names, ours, nil, KindLock, KindKazooLock)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			scanReference(names, ours, nil, KindLock, KindKazooLock)
		}
	})
}
