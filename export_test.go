package zklock

// CohortWaiters reports how many handles wait in the cohort of s on path,
// for tests that must act while a local waiter is queued.
func CohortWaiters(s *Session, path string) int {
	s.cohorts.mu.Lock()
	c := s.cohorts.m[path]
	s.cohorts.mu.Unlock()
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
