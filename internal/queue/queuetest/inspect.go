package queuetest

import (
	"slices"

	"github.com/zklock/zklock/internal/client"
)

// What a test reads of the tree and of what the Conns did.

// Node returns p's data and stat; ok is false if p does not exist.
func (s *Server) Node(p string) (data []byte, st client.Stat, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[p]
	if n == nil {
		return nil, client.Stat{}, false
	}
	return slices.Clone(n.data), n.stat, true
}

// Exists reports whether p exists.
func (s *Server) Exists(p string) bool {
	_, _, ok := s.Node(p)
	return ok
}

// List returns the names of p's children, sorted; nil if p does not exist.
func (s *Server) List(p string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes[p] == nil {
		return nil
	}
	return s.listLocked(p)
}

// Ephemerals returns the paths of session sid's ephemeral nodes, sorted.
func (s *Server) Ephemerals(sid int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p, n := range s.nodes {
		if n.stat.EphemeralOwner == sid {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// History returns every node created or deleted, in zxid order.
func (s *Server) History() []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history)
}

// Watches returns every data watch WaitChange set, in order.
func (s *Server) Watches() []Watch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.watches)
}

// ChildWatches returns every child watch ChildrenW set, in order.
func (s *Server) ChildWatches() []Watch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.childWs)
}

// Watching returns how many WaitChange calls are waiting on p now.
func (s *Server) Watching(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dataW[p])
}

// ChildWatching returns how many child watches on p have not fired yet.
func (s *Server) ChildWatching(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.childW[p])
}

// Calls returns how many requests of kind op every Conn has made.
func (s *Server) Calls(op Op) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}
