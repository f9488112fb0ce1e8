package fence

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
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
// concurrent use, and may be copied.
type Fence struct {
	table  string
	create string
	admit  string
}

// Option configures New.
type Option func(*options)

type options struct{ table string }

// WithTable names the fence table (default DefaultTable, "zklock_fence"):
// a plain SQL identifier of letters, digits and underscores, not starting
// with a digit, optionally qualified by a schema ("locks.fence"), each part
// at most 63 bytes. New returns ErrInvalidOption for any other.
func WithTable(name string) Option { return func(o *options) { o.table = name } }

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

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
	if !identifier.MatchString(o.table) {
		return nil, fmt.Errorf("%w: table name %q is not a plain SQL identifier", ErrInvalidOption, o.table)
	}
	return &Fence{
		table:  o.table,
		create: fmt.Sprintf(sqls.create, o.table),
		admit:  fmt.Sprintf(sqls.admit, o.table),
	}, nil
}

// Table returns the fence table's name.
func (f *Fence) Table() string { return f.table }

// CreateTable creates the fence table if it does not exist. Rows are
// created by Admit, one per resource, on its first use.
func (f *Fence) CreateTable(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, f.create); err != nil {
		return fmt.Errorf("zklock: create fence table %s: %w", f.table, err)
	}
	return nil
}

// Admit admits the rest of transaction tx to resource if token is not lower
// than the highest token admitted for it, and raises that to token, in one
// statement (one round trip). Otherwise it returns a *StaleTokenError
// (errors.Is(err, ErrStaleToken)): roll tx back, and everything it wrote
// before or after goes with it. On any error, roll tx back.
//
// Call it first in the transaction: the resource's row stays locked until
// tx ends, so transactions fenced on one resource then queue at their
// start rather than deadlock over rows they locked before (PostgreSQL
// detects such a deadlock and fails one of them), and on SQLite a deferred
// transaction writes first and never has to upgrade a read lock.
func (f *Fence) Admit(ctx context.Context, tx *sql.Tx, resource string, token int64) error {
	if err := check(resource, token); err != nil {
		return err
	}
	var stored int64
	if err := tx.QueryRowContext(ctx, f.admit, resource, token).Scan(&stored); err != nil {
		return fmt.Errorf("zklock: fence %q: %w", resource, err)
	}
	switch {
	case stored > token:
		return &StaleTokenError{Resource: resource, Token: token, Stored: stored}
	case stored < token:
		// Only a table that does not behave as CreateTable makes it does
		// this (a trigger, a narrower column): nothing is admitted.
		return fmt.Errorf("zklock: fence table %s kept %d for %q after admitting %d", f.table, stored, resource, token)
	}
	return nil
}

// Do runs fn in a transaction of db fenced on resource: it begins the
// transaction (the driver's default isolation level), admits token (see
// Admit), runs fn and commits. If the token is stale, fn is not run; if
// Admit, fn or the commit fails, everything is rolled back and the error
// returned (a *StaleTokenError for a refusal). fn must not commit or roll
// back tx.
func (f *Fence) Do(ctx context.Context, db *sql.DB, resource string, token int64, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := check(resource, token); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("zklock: fence %q: begin: %w", resource, err)
	}
	// A no-op once committed (sql.ErrTxDone); it also rolls back when fn
	// panics.
	defer func() { _ = tx.Rollback() }()
	if err := f.Admit(ctx, tx, resource, token); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("zklock: fence %q: commit: %w", resource, err)
	}
	return nil
}
