package fence

import (
	"errors"
	"fmt"
)

// Errors returned by the fence. Test for them with errors.Is; a refusal is
// a *StaleTokenError, which wraps ErrStaleToken.
var (
	// ErrStaleToken is returned by Fence.Admit, Fence.Do and Keeper.Do when
	// the token is lower than the highest already admitted for the
	// resource: a later holder of the lock has written, so this one no
	// longer holds. It is wrapped in a *StaleTokenError with both tokens.
	ErrStaleToken = errors.New("zklock: stale token")

	// ErrInvalidToken is returned for a token that no hold carries: zero or
	// negative (a zklock hold's Token is positive, and 0 when nothing is
	// held). Nothing is sent to the database then. Handler answers a
	// request whose token header is malformed with 400.
	ErrInvalidToken = errors.New("zklock: invalid fencing token")

	// ErrInvalidResource is returned for a resource name the fence cannot
	// store as it is: empty, over MaxResource bytes, not UTF-8 or holding a
	// NUL byte. Nothing is sent to the database then (a refused Admit still
	// rolls its transaction back). Handler answers 400 for such a name (500
	// for an empty one: the server named it).
	ErrInvalidResource = errors.New("zklock: invalid resource name")

	// ErrInvalidOption is returned by New for an unknown Dialect or a table
	// name that is not a plain SQL identifier or is an SQL keyword (see
	// WithTable).
	ErrInvalidOption = errors.New("zklock: invalid option")

	// ErrNilArgument is returned, instead of a panic, for a nil *Fence,
	// *sql.DB, *sql.Tx, function, Keeper, *Memory or handler; the error
	// names which. Handler answers 500 for it.
	ErrNilArgument = errors.New("zklock: nil argument")

	// ErrZeroFence is returned by the methods of a Fence that New did not
	// make (a zero Fence{}): it has no SQL to run.
	ErrZeroFence = errors.New("zklock: zero Fence: make it with fence.New")

	// ErrInSavepoint is returned by Fence.Admit (AdmitAll, Do, DoAll) on
	// PostgreSQL when the transaction is inside a savepoint (a
	// subtransaction, as an ORM's nested transaction makes): ROLLBACK TO
	// SAVEPOINT releases the row lock the admission took, and the
	// transaction would go on writing unfenced while a later token is
	// admitted and commits. The transaction is rolled back, as on any
	// error of Admit. Admit before taking any savepoint.
	ErrInSavepoint = errors.New("zklock: fence: admitted inside a savepoint, which could release the fence's row lock")

	// ErrCommitUnknown is returned by Fence.Do and DoAll (and so the
	// database Keeper) when ctx ended while COMMIT was in flight: the
	// database may have committed (it commits, then answers; a cancel or a
	// lost answer does not undo that) or not, and Do cannot tell. It
	// wraps ctx.Err() and the commit's error. Find out from the data
	// before retrying: a retry may write twice. Do says "rolled back" only
	// when ctx ended before COMMIT was sent.
	ErrCommitUnknown = errors.New("zklock: fence: commit outcome unknown: the context ended while COMMIT was in flight")

	// ErrHoldChanged is returned by a Transport's RoundTrip for a request
	// that carries a token (fixed when the request was first sent, or by
	// the caller) while the holder holds another token or none: the hold
	// the request was made under has ended, so the request is not sent. A
	// redirect or a re-send of a request made under a lost hold gets it.
	ErrHoldChanged = errors.New("zklock: the hold the request was made under has ended")
)

// StaleTokenError is a refusal: Token, the caller's, is lower than Stored,
// the highest token admitted for Resource. It wraps ErrStaleToken.
type StaleTokenError struct {
	Resource string
	Token    int64 // the caller's token
	Stored   int64 // the highest token admitted for Resource
}

// Error names the resource and both tokens.
func (e *StaleTokenError) Error() string {
	return fmt.Sprintf("%v %d for resource %q: %d was admitted", ErrStaleToken, e.Token, e.Resource, e.Stored)
}

// Unwrap returns ErrStaleToken.
func (e *StaleTokenError) Unwrap() error { return ErrStaleToken }

// check refuses what no hold can present, before anything is sent.
func check(resource string, token int64) error {
	if err := checkResource(resource); err != nil {
		return err
	}
	if token <= 0 {
		return fmt.Errorf("%w: %d", ErrInvalidToken, token)
	}
	return nil
}
