package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// admin is the coordinator's own session, straight to the servers: it lays
// out the run's nodes, harvests receipts and reads the final state.
type admin struct {
	s     *zklock.Session
	paths Paths
	mu    sync.Mutex
	seen  map[string]map[int64]Receipt // by primitive, by receipt sequence
	reuse []Reuse                      // sequence numbers harvested twice with different receipts
}

// again runs f until it succeeds or fails otherwise than by connection loss,
// for at most limit: the servers may be restarting. (A request made while
// the session is disconnected waits for a connection, within f's ctx.)
func again(ctx context.Context, limit time.Duration, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		err := f(ctx)
		if err == nil || !(errors.Is(err, zk.ErrConnectionLoss) || errors.Is(err, zk.ErrSessionMoved) ||
			errors.Is(err, zk.ErrSessionExpired)) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// layout creates the counters (at 0) and the receipts' parents.
func (a *admin) layout(ctx context.Context) error {
	c := a.s.Client()
	for _, prim := range Primitives {
		for _, p := range []string{path.Dir(a.paths.Receipts(prim)), a.paths.Receipts(prim)} {
			if err := createAll(ctx, c, p); err != nil {
				return err
			}
		}
		if _, err := c.Create(ctx, a.paths.Counter(prim), []byte("0"), zk.ModePersistent); err != nil {
			return err
		}
	}
	return nil
}

func createAll(ctx context.Context, c *zk.Client, p string) error {
	if p == "/" {
		return nil
	}
	if err := createAll(ctx, c, path.Dir(p)); err != nil {
		return err
	}
	_, err := c.Create(ctx, p, nil, zk.ModePersistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// harvest reads and deletes the receipts present now, so that a long run
// does not pile up nodes. A receipt read but not deleted is read again and
// recognised by its sequence number.
func (a *admin) harvest(ctx context.Context) error {
	c := a.s.Client()
	for _, prim := range Primitives {
		names, _, err := c.Children(ctx, a.paths.Receipts(prim))
		if err != nil {
			return err
		}
		for _, n := range names {
			p := a.paths.Receipts(prim) + "/" + n
			data, st, err := c.Get(ctx, p)
			if err != nil {
				return err
			}
			var r Receipt
			if err := json.Unmarshal(data, &r); err != nil {
				return err
			}
			r.Zxid = st.Czxid
			r.Seq, err = receiptSeq(n)
			if err != nil {
				return err
			}
			a.keep(prim, r)
			if err := c.Delete(ctx, p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
		}
	}
	return nil
}

// pending returns how many receipts await harvest.
func (a *admin) pending(ctx context.Context) (int64, error) {
	var n int64
	for _, prim := range Primitives {
		st, ok, err := a.s.Client().Exists(ctx, a.paths.Receipts(prim))
		if err != nil {
			return 0, err
		}
		if ok {
			n += int64(st.NumChildren)
		}
	}
	return n, nil
}

func (a *admin) keep(prim string, r Receipt) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen[prim] == nil {
		a.seen[prim] = map[int64]Receipt{}
	}
	if old, ok := a.seen[prim][r.Seq]; ok && (old.Proc != r.Proc || old.W != r.W) {
		a.reuse = append(a.reuse, Reuse{Prim: prim, Seq: r.Seq, First: writeName(old.Proc, old.W),
			Second: writeName(r.Proc, r.W), At: Now()})
	}
	a.seen[prim][r.Seq] = r
}

// reused returns the sequence numbers harvested twice.
func (a *admin) reused() []Reuse {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.reuse)
}

// receipts returns every receipt harvested, by primitive.
func (a *admin) receipts() map[string][]Receipt {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]Receipt{}
	for prim, m := range a.seen {
		for _, r := range m {
			out[prim] = append(out[prim], r)
		}
	}
	return out
}

// counters reads every primitive's counter.
func (a *admin) counters(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, prim := range Primitives {
		data, _, err := a.s.Client().Get(ctx, a.paths.Counter(prim))
		if err != nil {
			return nil, err
		}
		if out[prim], err = strconv.ParseInt(string(data), 10, 64); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ephemerals lists the ephemeral nodes left anywhere under the lock paths.
func (a *admin) ephemerals(ctx context.Context, p string) ([]string, error) {
	names, _, err := a.s.Client().Children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		child := p + "/" + n
		st, ok, err := a.s.Client().Exists(ctx, child)
		if err != nil {
			return nil, err
		}
		if ok && st.EphemeralOwner != 0 {
			out = append(out, child)
		}
		sub, err := a.ephemerals(ctx, child)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}
