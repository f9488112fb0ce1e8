package chaos

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Event kinds of a worker's log.
const (
	EvWait     = "wait"     // an acquisition starts waiting
	EvWaitFail = "waitfail" // the acquisition returned an error
	EvAcquire  = "acquire"  // the acquisition returned: the holder believes it holds
	EvWrite    = "write"    // a guarded increment returned (Res says how)
	EvRelease  = "release"  // the belief ended: Unlock called or loss seen first
	EvReadSeen = "readseen" // a reader saw the counter change under its read lock
	EvConn     = "conn"     // a Curator worker's connection state changed (Res: SUSPENDED, LOST, RECONNECTED...)
	EvPGWrite  = "pgwrite"  // a write to the PostgreSQL resource through the fence returned (Res says how)
)

// Write outcomes.
const (
	ResOK       = "ok"       // the multi committed
	ResRejected = "rejected" // the server refused it: not applied
	ResUnknown  = "unknown"  // connection lost: resolved by the receipt
	ResSkipped  = "skipped"  // not sent: the loss signal had fired
	ResRefused  = "refused"  // PostgreSQL: the fence refused the token as stale (Event.Stored refused it)
)

// Release reasons.
const (
	WhyReleased = "released" // the holder chose to release
	WhyLost     = "lost"     // the loss signal was seen first
)

// Event is one line of a worker's JSON-lines log. Times are Now readings.
type Event struct {
	Ev   string `json:"ev"`
	Proc string `json:"proc"` // worker and incarnation: "w2.1"
	Prim string `json:"prim"`
	G    int    `json:"g,omitempty"`    // which of the process's workloads of Prim (cohort: several)
	Mode string `json:"mode,omitempty"` // "w" exclusive or write, "r" read or lease
	T    int64  `json:"t"`              // when it happened (write: when sent)
	Tok  int64  `json:"tok,omitempty"`  // fencing token of the hold
	W    int64  `json:"w,omitempty"`    // write id, unique within Proc
	V    int64  `json:"v,omitempty"`    // counter value written
	T1   int64  `json:"t1,omitempty"`   // write: when the reply came
	Res  string `json:"res,omitempty"`  // write outcome or release reason
	Lost bool   `json:"lost,omitempty"` // write sent after the loss signal was seen
	Err  string `json:"err,omitempty"`
	Lib  string `json:"lib,omitempty"` // LibCurator for a Curator worker's events; empty for zklock's
	N    int    `json:"n,omitempty"`   // acquire: the leases a semaphore hold takes (0: one)
	Seq  int64  `json:"seq,omitempty"` // write acknowledged: the sequence number the server gave its receipt
	// Dl is a zklock holder's Session.OwnershipDeadline on the clock of T,
	// read at its acquire and before each write while the hold's loss signal
	// had not fired (0: not read, or read too late): the promise that no
	// rival can be granted before it.
	Dl int64 `json:"dl,omitempty"`
	// Node is a peer hold's node (acquire of a Curator or Kazoo worker):
	// the full path of its lock or lease node, whose deletion the
	// coordinator records (Outcome.Nodes).
	Node string `json:"node,omitempty"`
	// Stored is, for a write the fence refused, the token it had admitted.
	Stored int64 `json:"stored,omitempty"`
}

// Log appends events to a file, one JSON object per line, each with one
// write(2) so that a SIGKILL loses at most the line being formed.
type Log struct {
	mu sync.Mutex
	f  *os.File
}

// CreateLog opens path for appending, creating it if needed.
func CreateLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Log{f: f}, nil
}

// Add appends v as one line.
func (l *Log) Add(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.f.Write(append(b, '\n'))
	return err
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

// readLines decodes every complete JSON line of r into a T. A torn last
// line (the writer was killed mid-write) is ignored; any other bad line is
// an error.
func readLines[T any](r io.Reader) ([]T, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []T
	var bad error
	for line := 1; sc.Scan(); line++ {
		if bad != nil {
			return nil, bad // the bad line was not the last
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			bad = fmt.Errorf("line %d: %w", line, err)
			continue
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// ReadEvents reads a worker log written by Log.
func ReadEvents(path string) ([]Event, error) { return readFile[Event](path) }

// readFile reads a JSON-lines file written by Log (see readLines); a file
// that does not exist (its worker died before writing) reads as empty.
func readFile[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vs, err := readLines[T](f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vs, nil
}
