package session

import (
	"testing"
)

// Issue 43, finding 4: once an epoch's Done is closed, nothing can be
// tracked in it any more, by construction: a Track that runs the moment
// Done closes (here: inside the cancel that closes it, as a goroutine woken
// by Done could on another core) is refused. Otherwise the node would be
// accepted after its holder could have seen the loss.
func TestNothingTrackedAfterDone(t *testing.T) {
	policies := 0
	c := testConn(t, &policies)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.newEpochLocked()
	ep := c.ep
	var tr Tracked
	tr.Path = "/lock/n-0000000001"
	accepted, ran := false, false
	cancel := ep.cancel
	ep.cancel = func() {
		cancel()
		select {
		case <-ep.done:
		default:
			t.Fatal("the epoch's cancel did not close Done")
		}
		ran = true
		if accepted = ep.add(&tr); accepted {
			c.untrack(ep, &tr) // nothing for the test Conn to delete
		}
	}
	c.endEpochLocked(false)
	if !ran {
		t.Fatal("the epoch's end did not cancel it")
	}
	if accepted {
		t.Fatal("a Track after the epoch's Done closed was accepted")
	}
}
