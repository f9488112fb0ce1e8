package main

import (
	"log"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles turns on the block and mutex profiles that have a file
// name, and returns what writes them and the allocation profile: where the
// Go clients wait (on channels, locks, select) rather than where they spend
// CPU, and what they allocate.
func startProfiles(block, mutex, allocs string) (stop func()) {
	if block != "" {
		runtime.SetBlockProfileRate(1) // every blocking event: a profile run, not a measured one
	}
	if mutex != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if allocs != "" {
		runtime.MemProfileRate = 1 // every allocation: counts per acquisition, not samples
	}
	return func() {
		for name, file := range map[string]string{"block": block, "mutex": mutex, "allocs": allocs} {
			if file == "" {
				continue
			}
			f, err := os.Create(file)
			if err != nil {
				log.Print(err)
				continue
			}
			if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
				log.Print(err)
			}
			f.Close()
		}
	}
}
