package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Do runs fn in a transaction of db fenced on resource: it begins the
// transaction (the driver's default isolation level), admits token (see
// Admit), runs fn and commits. If the token is stale, fn is not run; if
// Admit, fn or the commit fails, everything is rolled back and the error
// returned (a *StaleTokenError for a refusal). If ctx ends before COMMIT is
// sent, the transaction is rolled back and the error says so and wraps
// ctx.Err(). If ctx ends while COMMIT is in flight, the error wraps
// ErrCommitUnknown and ctx.Err(): the commit may have happened (the
// transaction is bound to ctx, so a cancellation interrupts the wait for
// COMMIT's answer, not a commit the database already made). Any other
// commit error is returned as the driver gives it; one of a connection
// lost after COMMIT was sent leaves the outcome unknown too. fn must not
// commit or roll back tx.
func (f *Fence) Do(ctx context.Context, db *sql.DB, resource string, token int64, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := check(resource, token); err != nil {
		return err
	}
	return f.do(ctx, db, fmt.Sprintf("%q", resource), fn, func(tx *sql.Tx) error {
		return f.Admit(ctx, tx, resource, token)
	})
}

// DoAll is Do for several resources (resource to token, as a MultiLock's
// parts give them), admitted by AdmitAll in a fixed order.
func (f *Fence) DoAll(ctx context.Context, db *sql.DB, tokens map[string]int64, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if len(tokens) == 0 {
		return fmt.Errorf("%w: no resource to admit", ErrInvalidResource)
	}
	for r, tok := range tokens {
		if err := check(r, tok); err != nil {
			return err
		}
	}
	return f.do(ctx, db, fmt.Sprintf("%d resources", len(tokens)), fn, func(tx *sql.Tx) error {
		return f.AdmitAll(ctx, tx, tokens)
	})
}

// do is the transaction of Do and DoAll around admit and fn; what names
// the fenced resources in its errors.
func (f *Fence) do(ctx context.Context, db *sql.DB, what string, fn func(context.Context, *sql.Tx) error, admit func(*sql.Tx) error) error {
	switch {
	case f.usable() != nil:
		return f.usable()
	case db == nil:
		return fmt.Errorf("%w: *sql.DB", ErrNilArgument)
	case fn == nil:
		return fmt.Errorf("%w: fn", ErrNilArgument)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("zklock: fence %s: begin: %w", what, err)
	}
	// A no-op once committed or rolled back (sql.ErrTxDone); it also rolls
	// back when fn panics.
	defer func() { _ = tx.Rollback() }()
	if err := admit(tx); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		return err
	}
	// database/sql rolls a transaction back when its ctx ends: Commit would
	// then say only that the transaction is done. COMMIT is not sent yet,
	// so nothing commits.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("zklock: fence %s: rolled back, not committed: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		cerr := ctx.Err()
		switch {
		case cerr == nil:
			return fmt.Errorf("zklock: fence %s: commit: %w", what, err)
		case errors.Is(err, sql.ErrTxDone):
			// database/sql rolled back (ctx ended) before Commit could
			// take the transaction: COMMIT was never sent.
			return fmt.Errorf("zklock: fence %s: rolled back, not committed: %w", what, cerr)
		}
		// COMMIT may have been sent, and its answer interrupted (the
		// driver's cancel, or database/sql's check of ctx at Commit's
		// start, which Do cannot tell apart): either outcome is possible.
		return fmt.Errorf("zklock: fence %s: %w: %w (commit: %w)", what, ErrCommitUnknown, cerr, err)
	}
	return nil
}
