package zklock

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/errs"
)

// TestErrorClasses: every finer error the layers below return is one of
// the public sentinels for errors.Is, and keeps its own message.
func TestErrorClasses(t *testing.T) {
	for _, tc := range []struct {
		fine  error
		class error
		msg   string
	}{
		{errs.ErrInvalidOption, ErrInvalidArgument, "invalid option"},
		{errs.ErrInvalidPath, ErrInvalidArgument, "invalid path"},
		{errs.ErrDataTooLarge, ErrInvalidArgument, "data too large"},
		{errs.ErrNilContext, ErrInvalidArgument, "nil context"},
		{errs.ErrLimitMismatch, ErrInvalidArgument, "limit mismatch"},
		{errs.ErrNotAcquired, ErrLocked, "leases not acquired"},
		{errs.ErrLeaseLost, ErrLockLost, "lease lost"},
		{errs.ErrLeadershipLost, ErrLockLost, "leadership lost"},
		{errs.ErrNotLeader, ErrNotLocked, "not the leader"},
		{errs.ErrLeaseReleased, ErrNotLocked, "lease already released"},
		{errs.ErrAlreadyCampaign, ErrAlreadyLocked, "already campaigning"},
	} {
		if !errors.Is(tc.fine, tc.class) {
			t.Errorf("errors.Is(%q, %q) = false", tc.fine, tc.class)
		}
		if !strings.Contains(tc.fine.Error(), tc.msg) {
			t.Errorf("%q: message does not say %q", tc.fine, tc.msg)
		}
	}
}

// TestInvalidOptionIsInvalidArgument: a bad option, through the public
// API, is ErrInvalidArgument and says it was an option.
func TestInvalidOptionIsInvalidArgument(t *testing.T) {
	_, err := NewSession(context.Background(), WithServers())
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "invalid option") {
		t.Fatalf("NewSession(WithServers()): %v, want ErrInvalidArgument saying invalid option", err)
	}
	//lint:ignore SA1012 the nil context is the point
	_, err = NewSession(nil) //nolint:staticcheck
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("NewSession(nil): %v, want ErrInvalidArgument", err)
	}
}
