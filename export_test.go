package zklock

// CohortWaiters reports how many handles wait in the cohort of s on path,
// for tests that must act while a local waiter is queued.
func CohortWaiters(s *Session, path string) int { return s.cohorts.Waiters(path) }
