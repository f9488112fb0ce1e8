package fence

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DefaultTable is the fence table's name unless WithTable says otherwise.
const DefaultTable = "zklock_fence"

// Fence is a storage-side fence in a SQL database: a table of (resource,
// highest token admitted) and a check that admits a transaction's writes to
// a resource only if its token is not lower than the highest admitted
// before, and raises it.
//
// Admitting takes the resource's row lock until the transaction ends, so
// the admitted transactions of one resource commit one after another, in
// token order, and a transaction that was refused (or comes after a higher
// token committed) cannot commit a write under that resource's fence. Equal
// tokens are admitted: one hold may write in many transactions.
//
// A Fence holds no connection and no state beyond its SQL: it is safe for
// concurrent use, and may be copied. Make it with New: the methods of a
// zero Fence return ErrZeroFence, those of a nil *Fence ErrNilArgument.
type Fence struct {
	table  string
	create []string // run in one transaction by CreateTable
	admit  string
}

// Option configures New.
type Option func(*options)

type options struct{ table string }

// WithTable names the fence table (default DefaultTable, "zklock_fence"):
// a plain SQL identifier of letters, digits and underscores, not starting
// with a digit, optionally qualified by a schema ("locks.fence"), each part
// at most 63 bytes and not an SQL keyword that PostgreSQL or SQLite
// reserves ("order", "user", "select"...). New returns ErrInvalidOption for
// any other. An unqualified name resolves through the connection's schema
// search path (PostgreSQL's search_path): give the schema when the
// fence's writers may not all have the same one.
func WithTable(name string) Option { return func(o *options) { o.table = name } }

// New returns the fence of dialect d. Nothing is sent to the database:
// create the table with CreateTable, or with your migrations (the SQL is in
// docs/fencing.md).
func New(d Dialect, opts ...Option) (*Fence, error) {
	sqls, ok := dialects[d]
	if !ok {
		return nil, fmt.Errorf("%w: unknown %v", ErrInvalidOption, d)
	}
	o := options{table: DefaultTable}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkTable(o.table); err != nil {
		return nil, err
	}
	// Not Sprintf: a statement may not name the table, or hold a %.
	f := &Fence{table: o.table, admit: strings.ReplaceAll(sqls.admit, "%[1]s", o.table)}
	for _, q := range sqls.create {
		f.create = append(f.create, strings.ReplaceAll(q, "%[1]s", o.table))
	}
	return f, nil
}

// Table returns the fence table's name ("" for a nil or zero Fence).
func (f *Fence) Table() string {
	if f == nil {
		return ""
	}
	return f.table
}

// usable refuses a Fence that New did not make.
func (f *Fence) usable() error {
	switch {
	case f == nil:
		return fmt.Errorf("%w: *fence.Fence", ErrNilArgument)
	case f.admit == "":
		return ErrZeroFence
	}
	return nil
}

// CreateTable creates the fence table if it does not exist. Rows are
// created by Admit, one per resource, on its first use. Many processes may
// call it at once: on PostgreSQL, where two concurrent CREATE TABLE IF NOT
// EXISTS can both miss the other's uncommitted table and one then fail on
// the catalog's unique keys (SQLSTATE 23505, 42710 or 42P07), the
// creators take turns under a transaction-scoped advisory lock (key: the
// class 0x7a6b6c6b, "zklk", and hashtext of the table's name).
func (f *Fence) CreateTable(ctx context.Context, db *sql.DB) error {
	if err := f.usable(); err != nil {
		return err
	}
	if db == nil {
		return fmt.Errorf("%w: *sql.DB", ErrNilArgument)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("zklock: create fence table %s: begin: %w", f.table, err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range f.create {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("zklock: create fence table %s: %w", f.table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("zklock: create fence table %s: commit: %w", f.table, err)
	}
	return nil
}

// Admit admits the rest of transaction tx to resource if token is not lower
// than the highest token admitted for it, and raises that to token, in one
// statement (one round trip). Otherwise it returns a *StaleTokenError
// (errors.Is(err, ErrStaleToken)).
//
// On any error Admit rolls tx back, so everything tx wrote before goes, and
// a caller that ignores the error can neither write through tx nor commit
// it (sql.ErrTxDone): a refused transaction is never committable.
//
// On PostgreSQL, Admit refuses (ErrInSavepoint, the transaction rolled
// back) when it runs inside a savepoint (an ORM's nested transaction):
// rolling back to that savepoint would release the resource's row lock and
// leave the transaction unfenced. Admit at the transaction's top level,
// before any savepoint; savepoints taken after it keep the lock.
//
// Call it first in the transaction: the resource's row stays locked until
// tx ends, so transactions fenced on one resource then queue at their
// start rather than deadlock over rows they locked before (PostgreSQL
// detects such a deadlock and fails one of them), and on SQLite a deferred
// transaction writes first and never has to upgrade a read lock. For
// several resources in one transaction, use AdmitAll.
func (f *Fence) Admit(ctx context.Context, tx *sql.Tx, resource string, token int64) error {
	if tx == nil {
		return fmt.Errorf("%w: *sql.Tx", ErrNilArgument)
	}
	err := f.admit1(ctx, tx, resource, token)
	if err != nil {
		_ = tx.Rollback()
	}
	return err
}

// AdmitAll admits tx to every resource of tokens (resource to token, as a
// MultiLock's parts give them), in the byte order of the names, and
// returns the first refusal or error, having rolled tx back (see Admit).
// The fixed order matters: two transactions admitting one pair of
// resources in opposite orders each hold one row lock and wait for the
// other's, and PostgreSQL breaks that deadlock by failing one (SQLSTATE
// 40P01). Admit all of a transaction's resources in one AdmitAll, first.
func (f *Fence) AdmitAll(ctx context.Context, tx *sql.Tx, tokens map[string]int64) error {
	if tx == nil {
		return fmt.Errorf("%w: *sql.Tx", ErrNilArgument)
	}
	err := f.admitAll(ctx, tx, tokens)
	if err != nil {
		_ = tx.Rollback()
	}
	return err
}

func (f *Fence) admitAll(ctx context.Context, tx *sql.Tx, tokens map[string]int64) error {
	if len(tokens) == 0 {
		return fmt.Errorf("%w: no resource to admit", ErrInvalidResource)
	}
	for r, tok := range tokens {
		if err := check(r, tok); err != nil {
			return err
		}
	}
	for _, r := range slices.Sorted(maps.Keys(tokens)) {
		if err := f.admit1(ctx, tx, r, tokens[r]); err != nil {
			return err
		}
	}
	return nil
}

func (f *Fence) admit1(ctx context.Context, tx *sql.Tx, resource string, token int64) error {
	if err := f.usable(); err != nil {
		return err
	}
	if err := check(resource, token); err != nil {
		return err
	}
	var stored int64
	var topLevel bool
	if err := tx.QueryRowContext(ctx, f.admit, resource, token).Scan(&stored, &topLevel); err != nil {
		return fmt.Errorf("zklock: fence %q: %w", resource, err)
	}
	switch {
	case stored > token:
		return &StaleTokenError{Resource: resource, Token: token, Stored: stored}
	case !topLevel:
		return fmt.Errorf("%w: resource %q, token %d", ErrInSavepoint, resource, token)
	case stored < token:
		// Only a table that does not behave as CreateTable makes it does
		// this (a trigger, a narrower column): nothing is admitted.
		return fmt.Errorf("zklock: fence table %s kept %d for %q after admitting %d", f.table, stored, resource, token)
	}
	return nil
}
