//go:build !race

package queue

// raceEnabled: the race detector is on, which moves some values to the heap.
const raceEnabled = false
