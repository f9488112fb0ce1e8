package zklock

// CohortWaiters reports how many handles wait in the cohort of s on path,
// for tests that must act while a local waiter is queued.
func CohortWaiters(s *Session, path string) int { return s.cohorts.Waiters(path) }

// AssumeWatchModes lets s track a semaphore's path on this repository's
// ZooKeeper 3.8 servers (see session.Conn.AssumeWatchModes), for the tests
// of tracking that set no other watch of s on the path.
func AssumeWatchModes(s *Session) { s.c.AssumeWatchModes() }

// LeaseNodes returns the nodes of l not yet released.
func LeaseNodes(l *Lease) []string {
	if l.h.Released() {
		return nil
	}
	return l.h.Nodes()
}

// nodeOf is the path of a guard's node, or "" for a nil guard.
func nodeOf(g *CheckOp) string {
	if g == nil {
		return ""
	}
	return g.Path
}
