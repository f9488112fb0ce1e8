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

	// ErrInvalidResource is returned for an empty resource name.
	ErrInvalidResource = errors.New("zklock: invalid resource name")

	// ErrInvalidOption is returned by New for an unknown Dialect or a table
	// name that is not a plain SQL identifier (see WithTable).
	ErrInvalidOption = errors.New("zklock: invalid option")
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
	if resource == "" {
		return ErrInvalidResource
	}
	if token <= 0 {
		return fmt.Errorf("%w: %d", ErrInvalidToken, token)
	}
	return nil
}
