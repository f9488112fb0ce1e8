package fence

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// A Keeper keeps the highest token admitted per resource, for Handler.
//
// Do runs fn if token is not lower than the highest token admitted for
// resource, after raising that to token; otherwise it returns a
// *StaleTokenError (errors.Is(err, ErrStaleToken)) without running fn. It
// returns fn's error, and ctx's if ctx ends while it waits. No two fns of
// one resource run at once, so what an admitted fn does is finished before
// a later token is admitted: a stale caller can neither be admitted after a
// fresher one nor have its effect land after the fresher one's. Do runs fn
// in the calling goroutine and returns after fn: Handler's fn writes to the
// request's ResponseWriter (an informational response), which must not
// outlive the request.
//
// Memory keeps the tokens in the process; Fence.Keeper keeps them in the
// database the fn writes to, in the same transaction.
type Keeper interface {
	Do(ctx context.Context, resource string, token int64, fn func(ctx context.Context) error) error
}

var (
	_ Keeper = (*Memory)(nil)
	_ Keeper = dbKeeper{}
)

// Memory is a Keeper in the process's memory: one entry per resource ever
// admitted, kept for the Memory's life. It is only as durable as the
// process: after a restart the first token presented is admitted, stale or
// not, so use it for a resource that itself lives in the process (a cache,
// a file the process alone writes) and Fence.Keeper for one that outlives
// it. Do serializes the fns of one resource; a refusal is decided without
// waiting when the token is already lower than the highest admitted.
//
// A Memory is safe for concurrent use; it must not be copied. The zero
// value is an empty Memory, as NewMemory returns; the Do of a nil *Memory
// returns ErrNilArgument.
type Memory struct {
	mu  sync.Mutex
	res map[string]*memResource
}

type memResource struct {
	slot    chan struct{} // holds one element while a fn of the resource runs
	highest atomic.Int64  // written only while holding slot; read anywhere
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{res: make(map[string]*memResource)} }

// Do implements Keeper.
func (m *Memory) Do(ctx context.Context, resource string, token int64, fn func(ctx context.Context) error) error {
	switch {
	case m == nil:
		return fmt.Errorf("%w: *fence.Memory", ErrNilArgument)
	case fn == nil:
		return fmt.Errorf("%w: fn", ErrNilArgument)
	}
	if err := check(resource, token); err != nil {
		return err
	}
	r := m.resource(resource)
	// Tokens admitted only grow: a token already below one is refused
	// without queueing behind the fn in progress.
	if h := r.highest.Load(); token < h {
		return &StaleTokenError{Resource: resource, Token: token, Stored: h}
	}
	select {
	case r.slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.slot }()
	if h := r.highest.Load(); token < h {
		return &StaleTokenError{Resource: resource, Token: token, Stored: h}
	}
	r.highest.Store(token)
	return fn(ctx)
}

// Highest returns the highest token admitted for resource, 0 if none.
func (m *Memory) Highest(resource string) int64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	r := m.res[resource]
	m.mu.Unlock()
	if r == nil {
		return 0
	}
	return r.highest.Load()
}

func (m *Memory) resource(name string) *memResource {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.res == nil {
		m.res = make(map[string]*memResource)
	}
	r := m.res[name]
	if r == nil {
		r = &memResource{slot: make(chan struct{}, 1)}
		m.res[name] = r
	}
	return r
}

// Keeper returns a Keeper that keeps the tokens in db's fence table: its Do
// is Fence.Do, with the transaction in the ctx it passes fn (Tx returns
// it). What fn writes through that transaction commits only if the token
// was admitted, with the raised token, and not at all if fn fails; when
// ctx ends while COMMIT is in flight, Do returns ErrCommitUnknown (see
// Fence.Do), and Handler answers 503 "commit-unknown".
func (f *Fence) Keeper(db *sql.DB) Keeper { return dbKeeper{f: f, db: db} }

type dbKeeper struct {
	f  *Fence
	db *sql.DB
}

type txKey struct{}

func (k dbKeeper) Do(ctx context.Context, resource string, token int64, fn func(ctx context.Context) error) error {
	if fn == nil {
		return fmt.Errorf("%w: fn", ErrNilArgument)
	}
	return k.f.Do(ctx, k.db, resource, token, func(ctx context.Context, tx *sql.Tx) error {
		return fn(context.WithValue(ctx, txKey{}, tx))
	})
}

// Tx returns the fenced transaction that a Keeper made by Fence.Keeper
// passes to its fn (and so Handler to the handler it wraps, through the
// request's context), or nil when ctx has none. It is committed or rolled
// back by the Keeper: do neither.
func Tx(ctx context.Context) *sql.Tx {
	tx, _ := ctx.Value(txKey{}).(*sql.Tx)
	return tx
}
