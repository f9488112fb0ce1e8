package main

import "time"

// Kinds of scenario.
const (
	kindMutex = "mutex"
	kindSem   = "sem"
	kindRW    = "rw"
)

// scenario is one row of the results: a workload every listed
// implementation runs, client i on lock i%locks through session
// i%sessions.
type scenario struct {
	ID, Title string
	Kind      string
	Clients   int
	Sessions  int // 0: one per client
	Locks     int // 0: one
	Limit     int // semaphore leases
	ReadPct   int // RW: share of cycles that read
	Handoff   bool
	Fresh     int // > 0: each cycle locks a new path, its parents missing, this deep below the scenario's path
	Impls     []string
}

func (s scenario) sessions() int {
	if s.Sessions > 0 {
		return s.Sessions
	}
	return s.Clients
}

func (s scenario) locks() int { return max(s.Locks, 1) }

// Implementation names, in the tables' column order.
const (
	implRaw     = "zk-raw"
	implZklock  = "zklock"
	implGoZK    = "go-zookeeper"
	implCurator = "curator"
	implKazoo   = "kazoo"
	implEtcd    = "etcd"
	implRedsync = "redsync"
	implCohort  = "zklock-cohort" // zklock with WithCohort: the goroutines of a session share one node
	implQueue   = "zklock-queue"  // zklock's Semaphore with WithPermitLayout
	implSeq     = "zklock-seq"    // zklock's Mutex with WithSequenceLayout
	implWrite   = "one-write"     // one go-zookeeper setData per cycle: the limit of a handoff
)

var implOrder = []string{implWrite, implRaw, implZklock, implCohort, implQueue, implSeq, implGoZK, implCurator, implKazoo, implEtcd, implRedsync}

var (
	allLocks = []string{implZklock, implGoZK, implCurator, implKazoo, implEtcd, implRedsync}
	zkQueues = []string{implZklock, implGoZK, implCurator}
	// Both of a Mutex's layouts: Curator's, and the sequence layout
	// (issue 38: its predecessor found by number, not by a listing).
	handoffs = []string{implZklock, implSeq, implGoZK, implCurator, implEtcd}
	// etcd hands its lock over at tens per second here, so draining a
	// queue of 1000 after each trial would take longer than the whole run.
	handoffs1000 = []string{implZklock, implSeq, implGoZK, implCurator}
	// semaphores: both of zklock's layouts beside Curator's and Kazoo's.
	semaphores = []string{implZklock, implQueue, implCurator, implKazoo}
	// Kazoo 2.8's ReadLock and WriteLock deadlock under this load (every
	// client times out within seconds of the start): a reader waits on a
	// higher-sequence writer (kazoo #649, fixed after 2.8).
	rwLocks = []string{implZklock, implCurator}
)

// config is the shape of a run.
type config struct {
	mode      string
	repeats   int
	warm, dur time.Duration
	scenarios []scenario
	held      int // locks held at once for the heap-per-held-lock figure; 0: not measured
}

func fullConfig() config {
	return config{
		mode: "full", repeats: 5, warm: 300 * time.Millisecond, dur: time.Second, held: 100000,
		scenarios: []scenario{
			{ID: "uncontended", Title: "uncontended (1 client)", Kind: kindMutex, Clients: 1,
				Impls: append([]string{implRaw}, allLocks...)},
			{ID: "c2", Title: "2 clients, one lock", Kind: kindMutex, Clients: 2, Impls: zkQueues},
			{ID: "c4", Title: "4 clients, one lock", Kind: kindMutex, Clients: 4, Impls: allLocks},
			{ID: "c16", Title: "16 clients, one lock", Kind: kindMutex, Clients: 16, Impls: allLocks},
			{ID: "c64", Title: "64 clients, one lock", Kind: kindMutex, Clients: 64, Impls: allLocks},
			{ID: "c256", Title: "256 clients, one lock", Kind: kindMutex, Clients: 256, Impls: zkQueues},
			{ID: "16x16", Title: "16 clients, 16 locks", Kind: kindMutex, Clients: 16, Locks: 16, Impls: allLocks},
			{ID: "sem", Title: "semaphore, limit 2, 8 clients", Kind: kindSem, Clients: 8, Limit: 2, Impls: semaphores},
			{ID: "sem16", Title: "semaphore, limit 2, 16 clients", Kind: kindSem, Clients: 16, Limit: 2, Impls: semaphores},
			{ID: "rw", Title: "RW, 16 clients, 90% reads", Kind: kindRW, Clients: 16, ReadPct: 90, Impls: rwLocks},
			{ID: "handoff-10", Title: "handoff, 10 waiters", Kind: kindMutex, Clients: 11, Handoff: true, Impls: handoffs},
			{ID: "handoff-100", Title: "handoff, 100 waiters", Kind: kindMutex, Clients: 101, Sessions: 20, Handoff: true, Impls: handoffs},
			{ID: "handoff-1000", Title: "handoff, 1000 waiters", Kind: kindMutex, Clients: 1001, Sessions: 50, Handoff: true, Impls: handoffs1000},
			{ID: "handoff-5000", Title: "handoff, 5000 waiters", Kind: kindMutex, Clients: 5001, Sessions: 100, Handoff: true, Impls: []string{implZklock, implSeq}},
			{ID: "limit", Title: "one write per cycle (1 client): the limit", Kind: kindMutex, Clients: 1, Impls: []string{implWrite}},
			{ID: "fresh1", Title: "fresh path, depth 1 (1 client)", Kind: kindMutex, Clients: 1, Fresh: 1, Impls: []string{implZklock}},
			{ID: "fresh3", Title: "fresh path, depth 3 (1 client)", Kind: kindMutex, Clients: 1, Fresh: 3, Impls: []string{implZklock}},
			{ID: "g16", Title: "16 goroutines, one session, one lock", Kind: kindMutex, Clients: 16, Sessions: 1, Impls: cohorts},
			{ID: "g64", Title: "64 goroutines, one session, one lock", Kind: kindMutex, Clients: 64, Sessions: 1, Impls: cohorts},
			{ID: "4x16", Title: "4 sessions x 16 goroutines, one lock", Kind: kindMutex, Clients: 64, Sessions: 4, Impls: []string{implZklock, implCohort}},
			{ID: "distinct64", Title: "64 goroutines, one session, 64 locks", Kind: kindMutex, Clients: 64, Sessions: 1, Locks: 64, Impls: []string{implZklock, implGoZK}},
			{ID: "fresh64", Title: "64 goroutines, one session, a fresh path each cycle", Kind: kindMutex, Clients: 64, Sessions: 1, Locks: 64, Fresh: 1, Impls: []string{implZklock, implGoZK}},
		},
	}
}

// cohorts: many goroutines of one process on one lock. go-zookeeper makes
// one zk.Lock per goroutine on one connection, Curator one mutex per thread
// on one CuratorFramework, zklock one Mutex per goroutine on one Session,
// with and without cohorting.
var cohorts = []string{implZklock, implCohort, implGoZK, implCurator}

// quickConfig keeps one scenario per goal and drops the largest.
func quickConfig() config {
	c := fullConfig()
	c.mode, c.repeats, c.warm, c.dur, c.held = "quick", 3, 150*time.Millisecond, 300*time.Millisecond, 10000
	var keep []scenario
	for _, s := range c.scenarios {
		switch s.ID {
		case "c2", "c64", "c256", "handoff-100", "handoff-5000", "g64":
			continue
		case "handoff-1000":
			s.Impls = []string{implZklock, implSeq}
		case "handoff-10":
			s.Impls = []string{implZklock, implSeq, implGoZK}
		}
		keep = append(keep, s)
	}
	c.scenarios = keep
	return c
}
