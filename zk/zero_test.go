package zk_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zklock/zklock/zk"
)

// TestZeroClientAndWatch: the zero value (and a nil pointer) of Client and
// Watch returns an error wrapping ErrInvalidArgument from every acting
// method instead of panicking, and a zero Watch is ended (Done closed,
// Event NodeWatchEnded).
func TestZeroClientAndWatch(t *testing.T) {
	ctx := context.Background()
	for _, nilp := range []bool{false, true} {
		c, w, kind := new(zk.Client), new(zk.Watch), "zero "
		if nilp {
			c, w, kind = nil, nil, "nil "
		}
		for name, f := range map[string]func() error{
			"Client.Create":    func() error { _, err := c.Create(ctx, "/a", nil, zk.ModePersistent); return err },
			"Client.Get":       func() error { _, _, err := c.Get(ctx, "/"); return err },
			"Client.Set":       func() error { _, err := c.Set(ctx, "/", nil, -1); return err },
			"Client.Delete":    func() error { return c.Delete(ctx, "/a", -1) },
			"Client.Exists":    func() error { _, _, err := c.Exists(ctx, "/"); return err },
			"Client.Children":  func() error { _, _, err := c.Children(ctx, "/"); return err },
			"Client.GetACL":    func() error { _, _, err := c.GetACL(ctx, "/"); return err },
			"Client.SetACL":    func() error { _, err := c.SetACL(ctx, "/", zk.WorldACL(zk.PermAll), -1); return err },
			"Client.ExistsW":   func() error { _, _, _, err := c.ExistsW(ctx, "/"); return err },
			"Client.GetW":      func() error { _, _, _, err := c.GetW(ctx, "/"); return err },
			"Client.ChildrenW": func() error { _, _, _, err := c.ChildrenW(ctx, "/"); return err },
			"Client.Multi":     func() error { _, err := c.Multi(ctx); return err },
			"Client.Subscribe": func() error { _, err := c.Subscribe(ctx); return err },
			"Watch.Remove":     func() error { return w.Remove(ctx) },
			"Watch.Event":      func() error { return w.Event().Err },
			"Watch.Done": func() error {
				select {
				case <-w.Done():
					return zk.ErrInvalidArgument
				default:
					return errors.New("not closed")
				}
			},
			"Client accessors": func() error {
				if c.SessionID() != 0 || c.State() != zk.StateClosed || c.Timing() != (zk.Timing{}) {
					return fmt.Errorf("SessionID %d, State %v, Timing %v", c.SessionID(), c.State(), c.Timing())
				}
				return zk.ErrInvalidArgument
			},
		} {
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("PANIC: %v", r)
					}
				}()
				return f()
			}()
			if !errors.Is(err, zk.ErrInvalidArgument) {
				t.Errorf("%s%s: %v, want ErrInvalidArgument", kind, name, err)
			}
		}
	}
}
