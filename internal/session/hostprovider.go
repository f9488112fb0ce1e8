package session

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Reconnect pacing. go-zookeeper's own host provider makes the client sleep
// a full second before every reconnect to a lone server, and never backs off
// further against a dead ensemble. This one tries every server at once after
// a drop, then backs off exponentially with jitter between rounds, up to
// reconnectMax.
const (
	reconnectMin = 25 * time.Millisecond
	reconnectMax = time.Second
)

// hostProvider implements zk.HostProvider. Addresses are dialled as given,
// so the dialer resolves names at each attempt.
type hostProvider struct {
	stop <-chan struct{} // cuts a backoff sleep short when the session closes

	mu      sync.Mutex
	servers []string
	next    int
	tried   int           // attempts since the last successful connection
	delay   time.Duration // sleep before the next round
}

func (h *hostProvider) Init(servers []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers = append([]string(nil), servers...)
	rand.Shuffle(len(h.servers), func(i, j int) { h.servers[i], h.servers[j] = h.servers[j], h.servers[i] })
	return nil
}

func (h *hostProvider) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the next server. After each full round without a connection
// it sleeps the current backoff first; once the backoff has reached its
// maximum it reports retryStart, so that go-zookeeper fails queued requests
// with zk.ErrNoServer (and pauses its own second) rather than hold them.
func (h *hostProvider) Next() (string, bool) {
	h.mu.Lock()
	server := h.servers[h.next]
	h.next = (h.next + 1) % len(h.servers)
	round := h.tried > 0 && h.tried%len(h.servers) == 0
	h.tried++
	var sleep time.Duration
	if round {
		sleep = h.delay/2 + rand.N(h.delay/2+1)
		h.delay = min(2*h.delay, reconnectMax)
	}
	giveUp := round && sleep >= reconnectMax/2
	h.mu.Unlock()
	if sleep > 0 {
		t := time.NewTimer(sleep)
		select {
		case <-t.C:
		case <-h.stop:
			t.Stop()
		}
	}
	return server, giveUp
}

func (h *hostProvider) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tried = 0
	h.delay = reconnectMin
}
