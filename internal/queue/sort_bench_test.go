package queue

import (
	"fmt"
	"testing"
)

func BenchmarkSort1000(b *testing.B) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("%s%s%010d", NewProtectedPrefix(), KindLock, i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Sort(names, KindLock, KindKazooLock)
	}
}
