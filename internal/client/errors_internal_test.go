package client

import (
	"errors"
	"testing"
)

// TestFromCode: every code the server can send maps to its sentinel; an
// unknown code to an error that is none of them but keeps the code.
func TestFromCode(t *testing.T) {
	if fromCode(0) != nil {
		t.Fatal("code 0 is success")
	}
	for code, want := range map[int32]error{-101: ErrNoNode, -110: ErrNodeExists, -4: ErrConnectionLoss, -127: ErrThrottledOp, -118: ErrSessionMoved} {
		if got := fromCode(code); got != want {
			t.Errorf("code %d: %v, want %v", code, got, want)
		}
	}
	got := fromCode(-999)
	for _, known := range byCode {
		if errors.Is(got, known) {
			t.Fatalf("unknown code matched %v", known)
		}
	}
	if ce, ok := got.(*codeError); !ok || ce.code != -999 || got.Error() != "zklock: zk: unknown error code -999" {
		t.Fatalf("unknown code: %#v", got)
	}
	if len(byCode) != 31 {
		t.Fatalf("%d codes known, want the 31 of KeeperException.Code in 3.8", len(byCode))
	}
}
