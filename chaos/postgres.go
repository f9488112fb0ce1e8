package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the workers' and the coordinator's driver
	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/fence/pgtest"
)

// EnvPG gives a worker the connection string of the run's PostgreSQL
// server; without it the worker writes to ZooKeeper only.
const EnvPG = "ZKLOCK_CHAOS_PG"

// pgFenced reports whether prim's holders also write to PostgreSQL through
// the fence: the exclusive primitives (an RWMutex's writers), each one
// resource of its own. A semaphore's holders hold together by design, so
// no token of theirs is stale for the others.
func pgFenced(prim, mode string) bool { return !counting(prim) && mode == ModeExclusive }

// The PostgreSQL resource: per primitive, a counter that every fenced write
// reads and sets to one more (no lock of its own: only the fence's row
// lock orders the writes), and a log row per write with the value it wrote
// and its token, committed in the same transaction. The values order the
// committed writes of a resource: each read the value the one before it
// committed, or the values repeat.
const pgTables = `CREATE TABLE chaos_counter (resource text PRIMARY KEY, n bigint NOT NULL);
CREATE TABLE chaos_log (id bigserial PRIMARY KEY, resource text NOT NULL, v bigint NOT NULL,
	token bigint NOT NULL, proc text NOT NULL, w bigint NOT NULL)`

// PGRow is one committed fenced write: its log row.
type PGRow struct {
	Resource string `json:"resource"`
	V        int64  `json:"v"`   // the counter value it wrote
	Tok      int64  `json:"tok"` // its token
	Proc     string `json:"proc"`
	W        int64  `json:"w"` // write id, unique within Proc
}

// PGOutcome is what the PostgreSQL resource holds once every worker has
// exited.
type PGOutcome struct {
	Rows     []PGRow          `json:"rows"`     // in insertion order
	Counters map[string]int64 `json:"counters"` // final counter, by resource
	Fence    map[string]int64 `json:"fence"`    // the fence's highest token admitted, by resource
}

// pgServer is the run's PostgreSQL server, started by the coordinator.
type pgServer struct {
	s  *pgtest.Server
	db *sql.DB
}

// startPostgres starts a server for t (stopped by t.Cleanup), with fsync
// like the ZooKeeper servers, and lays out the fence and the resources.
func startPostgres(ctx context.Context, t testing.TB, fsync bool) (*pgServer, error) {
	var opts []pgtest.Option
	if fsync {
		opts = append(opts, pgtest.WithFsync())
	}
	s := pgtest.Start(t, opts...)
	db, err := sql.Open("pgx", s.DSN())
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { db.Close() })
	f, err := fence.New(fence.Postgres)
	if err != nil {
		return nil, err
	}
	if err := f.CreateTable(ctx, db); err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, pgTables); err != nil {
		return nil, err
	}
	for _, prim := range Primitives {
		if !counting(prim) {
			if _, err := db.ExecContext(ctx, "INSERT INTO chaos_counter VALUES ($1, 0)", prim); err != nil {
				return nil, err
			}
		}
	}
	return &pgServer{s: s, db: db}, nil
}

// collect reads the resource's final state.
func (p *pgServer) collect(ctx context.Context) (*PGOutcome, error) {
	out := &PGOutcome{Counters: map[string]int64{}, Fence: map[string]int64{}}
	rows, err := p.db.QueryContext(ctx, "SELECT resource, v, token, proc, w FROM chaos_log ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r PGRow
		if err := rows.Scan(&r.Resource, &r.V, &r.Tok, &r.Proc, &r.W); err != nil {
			return nil, err
		}
		out.Rows = append(out.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for table, m := range map[string]map[string]int64{"chaos_counter": out.Counters, fence.DefaultTable: out.Fence} {
		if err := readPairs(ctx, p.db, table, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPairs reads a table of (resource, bigint) into m.
func readPairs(ctx context.Context, db *sql.DB, table string, m map[string]int64) error {
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		m[k] = v
	}
	return rows.Err()
}

// pgStore is a worker's side of the resource.
type pgStore struct {
	db *sql.DB
	f  *fence.Fence
}

// openPG opens a worker's pool on dsn: a connection per fenced workload.
func openPG(dsn string) (*pgStore, error) {
	f, err := fence.New(fence.Postgres)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(len(Primitives) + CohortSize)
	return &pgStore{db: db, f: f}, nil
}

// write increments prim's counter in a transaction fenced with token (or,
// broken, not fenced) and logs the write's row in it; it returns the value
// written.
func (p *pgStore) write(ctx context.Context, prim, proc string, w, token int64, nofence bool) (int64, error) {
	var v int64
	inc := func(ctx context.Context, tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT n FROM chaos_counter WHERE resource = $1", prim).Scan(&v); err != nil {
			return err
		}
		v++
		if _, err := tx.ExecContext(ctx, "UPDATE chaos_counter SET n = $1 WHERE resource = $2", v, prim); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO chaos_log (resource, v, token, proc, w) VALUES ($1, $2, $3, $4, $5)",
			prim, v, token, proc, w)
		return err
	}
	if !nofence {
		return v, p.f.Do(ctx, p.db, prim, token, inc)
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	if err := inc(ctx, tx); err != nil {
		return 0, err
	}
	return v, tx.Commit()
}

// pgResult classifies a fenced write's error: the fence's refusal (nothing
// committed), or anything else, whose outcome the log table settles.
func pgResult(err error) (res string, stored int64) {
	var stale *fence.StaleTokenError
	switch {
	case err == nil:
		return ResOK, 0
	case errors.As(err, &stale):
		return ResRefused, stale.Stored
	}
	return ResUnknown, 0
}

// pgWrite is a fenced holder's write to PostgreSQL, logged as EvPGWrite;
// like increment, it is not sent once the loss signal was seen.
func (w *workload) pgWrite(ctx context.Context, h *hold, lostAt func() int64) {
	if w.pg == nil || !pgFenced(w.prim, h.mode) {
		return
	}
	id := w.wid.Add(1)
	lost := lostAt() != 0
	if lost && !w.broken.IgnoreLost {
		w.add(Event{Ev: EvPGWrite, T: Now(), Tok: h.token, W: id, Res: ResSkipped})
		return
	}
	cctx, cancel := context.WithTimeout(ctx, opLimit)
	t0 := Now()
	v, err := w.pg.write(cctx, w.prim, w.proc, id, h.token, w.broken.NoFence)
	t1 := Now()
	cancel()
	res, stored := pgResult(err)
	e := Event{Ev: EvPGWrite, T: t0, T1: t1, Tok: h.token, W: id, Res: res, Lost: lost, Stored: stored}
	if err != nil {
		e.Err = fmt.Sprint(err)
	} else {
		e.V = v
	}
	w.add(e)
}
