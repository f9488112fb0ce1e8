package main

import (
	"context"
	"fmt"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
)

// stamp is a time as every --json output writes it: RFC 3339 in UTC with
// milliseconds ("2026-11-24T12:32:44.291Z"), the precision of ZooKeeper's
// node times, always three digits, whatever the local zone. (Durations
// are integer milliseconds, in fields named *_ms.)
type stamp time.Time

const stampFormat = "2006-01-02T15:04:05.000Z07:00"

func (s stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(s).UTC().Format(stampFormat) + `"`), nil
}

func (s *stamp) UnmarshalJSON(b []byte) error { return (*time.Time)(s).UnmarshalJSON(b) }

// entry is one node of a lock's queue, as status shows it.
type entry struct {
	Role    string `json:"role"`           // "holder" or "waiting"
	Mode    string `json:"mode,omitempty"` // "read" or "write" for a reader/writer lock
	Node    string `json:"node"`           // full path
	Session string `json:"session"`        // hex, as ZooKeeper prints it
	Token   int64  `json:"token"`          // the fencing token (Mutex.Token: czxid << 12)
	Created stamp  `json:"created"`        // by the server's clock
	AgeMS   int64  `json:"age_ms"`
	Data    string `json:"data"`
	// Revoke: a revocation request was written into the node (zklock
	// revoke, Curator's Revoker); its data is the request.
	Revoke bool `json:"revocation_requested,omitempty"`
}

// report is the state of one path: the holders, then the waiters in the
// order they will be served.
type report struct {
	Path string `json:"path"`
	// Kind is ls's name of the primitive (mutex, mutex/election, rwmutex,
	// semaphore, semaphore-queue); omitted when nobody is there.
	Kind         string  `json:"kind,omitempty"`
	Limit        int     `json:"limit,omitempty"` // of a semaphore
	Holders      []entry `json:"holders"`
	Waiting      []entry `json:"waiting"`
	WaitingCount int     `json:"waiting_count"` // len(Waiting), as ls has it
}

// list reads the state of path once (the first state WatchLock delivers);
// kind "" detects it. A failed read fails it.
func list(ctx context.Context, s *zklock.Session, path, kind string) (report, error) {
	if err := checkPath(s, path); err != nil {
		return report{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan error, 1)
	states, err := watchLock(ctx, s, path, kind, func(err error) {
		select {
		case failed <- err:
		default:
		}
		cancel()
	})
	if err != nil {
		return report{}, err
	}
	if st, ok := <-states; ok {
		r := newReport(st)
		tellMutex(ctx, s, &r)
		return r, nil
	}
	select {
	case err := <-failed:
		return report{}, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return report{}, err
	}
	return report{}, zklock.ErrSessionClosed
}

// watchLock is zklock.WatchLock of path as the kind status names ("":
// detected), with failed told of each failed read.
func watchLock(ctx context.Context, s *zklock.Session, path, kind string, failed func(error)) (<-chan zklock.LockState, error) {
	opts := []zklock.WatchOption{zklock.WatchErrors(failed)}
	if k, ok := libKinds[kind]; ok {
		opts = append(opts, zklock.WatchKind(k))
	}
	return zklock.WatchLock(ctx, s, path, opts...)
}

// libKinds are the library's names of the kinds status shows.
var libKinds = map[string]zklock.Kind{
	kindLock:      zklock.KindMutex,
	kindRW:        zklock.KindRWMutex,
	kindSemaphore: zklock.KindSemaphore,
	kindSemQueue:  zklock.KindSemaphorePermit,
}

// lsKinds are ls's names of the kinds WatchLock tells apart. A Mutex and an
// Election are one kind on the wire: tellMutex tells them apart as ls does.
var lsKinds = map[zklock.Kind]string{
	zklock.KindMutex:           lsMutexOrElection,
	zklock.KindMutexSeq:        lsMutex, // a zklock Mutex WithSequenceLayout: no Election has it
	zklock.KindRWMutex:         lsRWMutex,
	zklock.KindSemaphore:       lsSemaphore,
	zklock.KindSemaphorePermit: lsSemQueue,
}

// newReport is what status shows of st.
func newReport(st zklock.LockState) report {
	r := report{Path: st.Path, Kind: lsKinds[st.Kind], Limit: st.Limit, Holders: []entry{}, Waiting: []entry{},
		WaitingCount: len(st.Waiting)}
	if len(st.Holders)+len(st.Waiting) == 0 {
		r.Kind = "" // nobody there: no kind to show, even one WatchKind asked for
	}
	mode := func(c zklock.Contender) string {
		if st.Kind == zklock.KindRWMutex {
			return rwMode(c)
		}
		return ""
	}
	for _, c := range st.Holders {
		r.add(true, mode(c), c)
	}
	for _, c := range st.Waiting {
		r.add(false, mode(c), c)
	}
	return r
}

// isWriter: in a read-write queue a Kazoo lock node (KindMutex) is a
// writer, as Kazoo's WriteLock's.
func isWriter(c zklock.Contender) bool {
	return c.Kind == zklock.KindRWMutexWrite || c.Kind == zklock.KindMutex
}

func rwMode(c zklock.Contender) string {
	if isWriter(c) {
		return "write"
	}
	return "read"
}

func (r *report) add(held bool, mode string, c zklock.Contender) {
	e := newEntry(held, mode, c)
	if held {
		r.Holders = append(r.Holders, e)
		return
	}
	r.Waiting = append(r.Waiting, e)
}

func newEntry(held bool, mode string, c zklock.Contender) entry {
	e := entry{Role: "waiting", Mode: mode, Node: c.Path, Session: fmt.Sprintf("0x%x", c.Session),
		Token: c.Token, Created: stamp(c.Created), AgeMS: time.Since(c.Created).Milliseconds(), Data: string(c.Data),
		Revoke: string(c.Data) == queue.RevokeMessage}
	if held {
		e.Role = "holder"
	}
	return e
}

// dataCell is what status shows of an entry's data: a revocation request
// is named as one.
func dataCell(e entry) string {
	if e.Revoke {
		return "revocation requested"
	}
	return printable(e.Data, 40)
}

// tellMutex names a "lock-" queue a mutex when its holder's node carries
// the tag only a zklock lock adds to its data, as ls does (see tagged): a
// status must not call an election a lock, nor ls and status disagree. A
// failed read (the holder gone since) leaves it mutex/election.
func tellMutex(ctx context.Context, s *zklock.Session, r *report) {
	if r.Kind != lsMutexOrElection || len(r.Holders) == 0 {
		return
	}
	if data, _, err := s.Client().Get(ctx, r.Holders[0].Node); err == nil && tagged(data) {
		r.Kind = lsMutex
	}
}
