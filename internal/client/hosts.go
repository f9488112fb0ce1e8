package client

import (
	"math/rand/v2"
	"time"
)

// Reconnect pacing: after a connection is lost every server is tried at
// once, in turn; after each round in which none answered, the client
// waits, from backoffMin doubling up to Config.MaxReconnectDelay (by
// default backoffMax), with jitter (half the delay plus a random part of
// the other half), so that clients of a restarting ensemble do not come
// back in step.
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = time.Second
)

// hostList hands out the servers to try, in an order shuffled once, and
// paces the attempts. It is used by the connection goroutine alone.
type hostList struct {
	addrs  []string
	next   int
	failed int // attempts since the last connection
	delay  time.Duration
	max    time.Duration
}

func (h *hostList) init(addrs []string, maxDelay time.Duration) {
	h.addrs = append([]string(nil), addrs...)
	rand.Shuffle(len(h.addrs), func(i, j int) { h.addrs[i], h.addrs[j] = h.addrs[j], h.addrs[i] })
	h.max = maxDelay
	h.delay = min(backoffMin, h.max)
}

// pick returns the next server and how long to wait before trying it.
func (h *hostList) pick() (string, time.Duration) {
	var wait time.Duration
	if h.failed > 0 && h.failed%len(h.addrs) == 0 {
		wait = h.delay/2 + rand.N(h.delay/2+1)
		h.delay = min(2*h.delay, h.max)
	}
	addr := h.addrs[h.next]
	h.next = (h.next + 1) % len(h.addrs)
	h.failed++
	return addr, wait
}

// connected resets the pacing: the next loss retries at once.
func (h *hostList) connected() {
	h.failed = 0
	h.delay = min(backoffMin, h.max)
}
