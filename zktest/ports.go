package zktest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Ports for the servers come from a band outside the kernel's ephemeral
// range, each reserved by a lock file for as long as its cluster lives.
//
// A port the kernel hands out for "127.0.0.1:0" is an ephemeral one, and
// so is the local port of every outgoing connection on the machine: in the
// moment between choosing a port and the JVM binding it, or while a
// server is down for a restart, another process's connection could take
// it. A server whose election port is taken that way exits about three
// seconds after it starts (ZooKeeper gives up binding it), with its
// client port refusing connections from then on: a chaos run saw exactly
// that under load (a server gone 2.5 s after the ensemble served). The
// lock files keep two test processes' clusters off each other's ports,
// which no listen check can while a server of the other is down.
const (
	bandFloor    = 10000 // the lowest port zktest uses
	minBand      = 2000  // a smaller band than this falls back to the kernel's choice
	portTries    = 2000  // candidates tried for one reservation
	defaultEphLo = 32768
	defaultEphHi = 60999
)

// portSet is a set of reserved ports; release gives them back.
type portSet struct {
	mu    sync.Mutex
	ports []int
	locks []*os.File
}

// release unlocks every port of the set; it is safe to call twice.
func (s *portSet) release() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.locks {
		unlockFile(f)
		f.Close()
	}
	s.locks = nil
}

// portBand returns the band [lo, hi) zktest picks ports from: the larger
// of the ranges below and above the ephemeral one, from bandFloor up. ok
// is false when neither is wide enough.
func portBand() (lo, hi int, ok bool) {
	ephLo, ephHi := defaultEphLo, defaultEphHi
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && l <= h {
				ephLo, ephHi = l, h
			}
		}
	}
	below, above := ephLo-bandFloor, 65536-(ephHi+1)
	switch {
	case below >= above && below >= minBand:
		return bandFloor, ephLo, true
	case above >= minBand:
		return max(ephHi+1, bandFloor), 65536, true
	}
	return 0, 0, false
}

// reservePorts returns k distinct ports that are free on 127.0.0.1 and
// reserved for this process until the set is released.
func reservePorts(k int) (*portSet, error) {
	lo, hi, ok := portBand()
	if !ok {
		ports, err := kernelPorts(k)
		return &portSet{ports: ports}, err
	}
	dir := portLockDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("zktest: reserve ports: %w", err)
	}
	s := &portSet{}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for try := 0; len(s.ports) < k; try++ {
		if try == portTries*k {
			s.release()
			return nil, fmt.Errorf("zktest: reserve ports: no free port in %d-%d after %d tries", lo, hi-1, try)
		}
		p := lo + rand.IntN(hi-lo)
		f, err := lockPort(dir, p)
		if err != nil {
			s.release()
			return nil, fmt.Errorf("zktest: reserve ports: %w", err)
		}
		if f == nil {
			continue // another process holds it
		}
		// Held until every port is chosen, which also keeps them distinct.
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			unlockFile(f)
			f.Close()
			continue
		}
		held = append(held, l)
		s.ports = append(s.ports, p)
		s.locks = append(s.locks, f)
	}
	return s, nil
}

// portLockDir is where the lock files are: one directory per user, so that
// another user's directory (made with its owner's permissions) cannot
// stop a reservation. Another user's servers are still seen by the listen
// check, except while one is down.
func portLockDir() string {
	return filepath.Join(os.TempDir(), "zktest-ports-"+strconv.Itoa(os.Getuid()))
}

// lockPort takes port p's lock file in dir without waiting: nil if another
// process holds it. The files stay: removing one could let two processes
// lock two files of one name.
func lockPort(dir string, p int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if !tryLockFile(f) {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// kernelPorts returns k distinct ports the kernel chose, free a moment ago.
func kernelPorts(k int) ([]int, error) {
	ports := make([]int, 0, k)
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for len(ports) < k {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("zktest: find a free port: %w", err)
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
