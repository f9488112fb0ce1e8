package client

import (
	"errors"
	"strings"
	"testing"
)

// A peer that answers in text (an HTTP server's 400) is named as no
// ZooKeeper client port, not as a frame length of 1213486160; a binary
// length past maxFrame is still a malformed packet alone.
func TestFrameReaderNamesATextPeer(t *testing.T) {
	_, err := newFrameReader(strings.NewReader("HTTP/1.1 400 Bad Request\r\n\r\n"), nil).next()
	var nz *NotZooKeeperError
	if !errors.As(err, &nz) || nz.Head != "HTTP" || !errors.Is(err, errShort) {
		t.Fatalf("next: %v; want a NotZooKeeperError with head HTTP, and errShort", err)
	}
	if strings.Contains(err.Error(), "frame length") {
		t.Errorf("error %q", err)
	}
	_, err = newFrameReader(strings.NewReader("\x7f\x00\x00\x00"), nil).next()
	if !errors.Is(err, errShort) || errors.As(err, &nz) {
		t.Errorf("next on a binary length past maxFrame: %v; want errShort alone", err)
	}
}
