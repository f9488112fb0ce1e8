package chaos

// NodeLife is what the coordinator saw of one node under a lock path, on
// the clock of Now: when a listing first showed it, and by when it was
// gone (0: never seen gone). Gone is an upper bound: the earliest of a
// NodeDeleted notification (stamped as go-zookeeper reads it, before any
// other work), a listing without it, or a read that found no node, on a
// connection to any of the servers that had listed it.
type NodeLife struct {
	Seen int64 `json:"seen"`
	Gone int64 `json:"gone,omitempty"`
}
