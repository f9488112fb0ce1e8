// Command fencecost measures what the fence costs a write, side by side
// with the same write unfenced, on PostgreSQL servers it starts (pgtest:
// fsync off, and with -fsync also on) and on SQLite: the round trips each
// write makes (counted on the wire) and its time, over interleaved repeats
// (the order of the two alternates), with the median of the per-repeat
// ratios. One connection, one writer: the latency of a write, not a
// throughput. Run from fence/: go run ./internal/fencecost.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/fence/internal/roundtrip"
	"github.com/zklock/zklock/fence/pgtest"
	_ "modernc.org/sqlite"
)

func main() {
	repeats := flag.Int("repeats", 15, "interleaved repeats")
	n := flag.Int("n", 300, "writes of each kind per repeat")
	fsync := flag.Bool("fsync", false, "also measure a PostgreSQL server with fsync on")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	fmt.Printf("fencecost: %d repeats of %d writes each way, %d CPUs, load average %s at start\n\n",
		*repeats, *n, runtime.NumCPU(), loadavg())
	fmt.Println("| engine | write | round trips unfenced / fenced | unfenced µs/write (median) | fenced µs/write (median) | fenced / unfenced (median of ratios) |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	configs := [][]pgtest.Option{nil}
	if *fsync {
		configs = append(configs, []pgtest.Option{pgtest.WithFsync()})
	}
	for _, opts := range configs {
		if err := measurePostgres(ctx, len(opts) > 0, *repeats, *n, opts); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := measureSQLite(ctx, *repeats, *n); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("\nload average %s at the end\n", loadavg())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// pair is a write unfenced and the same write fenced.
type pair struct {
	name             string
	unfenced, fenced func(ctx context.Context, token int64) error
	tripsU, tripsF   int64 // counted round trips per write, 0 if not counted
	countTrips       func(w func(context.Context, int64) error, token int64) (int64, error)
	engine           string
}

func measurePostgres(ctx context.Context, fsync bool, repeats, n int, opts []pgtest.Option) error {
	s, err := pgtest.Launch(ctx, opts...)
	if err != nil {
		return err
	}
	defer s.Close()
	var trips roundtrip.Counter
	db, err := roundtrip.OpenPostgres(s.DSN(), &trips)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	engine := "PostgreSQL 15, fsync off"
	if fsync {
		engine = "PostgreSQL 15, fsync on"
	}
	f, _ := fence.New(fence.Postgres)
	if err := setup(ctx, db, f, "CREATE TABLE item (id int PRIMARY KEY, v bigint)"); err != nil {
		return err
	}
	for _, p := range postgresPairs(db, f) {
		p.engine = engine
		p.countTrips = func(w func(context.Context, int64) error, token int64) (int64, error) {
			before := trips.Load()
			err := w(ctx, token)
			return trips.Load() - before, err
		}
		if err := run(ctx, p, repeats, n); err != nil {
			return err
		}
	}
	return nil
}

func measureSQLite(ctx context.Context, repeats, n int) error {
	dir, err := os.MkdirTemp("", "fencecost-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "cost.db")+"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	f, _ := fence.New(fence.SQLite)
	if err := setup(ctx, db, f, "CREATE TABLE item (id INTEGER PRIMARY KEY, v INTEGER)"); err != nil {
		return err
	}
	var version, journal string
	var sync int
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		return err
	}
	_ = db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal)
	_ = db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync)
	p := txPair(db, f, "UPDATE item SET v = ?1 WHERE id = 1")
	p.engine = fmt.Sprintf("SQLite %s (modernc), journal %s, synchronous %d", version, journal, sync)
	return run(ctx, p, repeats, n)
}

func setup(ctx context.Context, db *sql.DB, f *fence.Fence, create string) error {
	if err := f.CreateTable(ctx, db); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, create); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, "INSERT INTO item VALUES (1, 0)")
	return err
}

// txPair: begin, update, commit; and begin, Admit, update, commit.
func txPair(db *sql.DB, f *fence.Fence, update string) pair {
	write := func(ctx context.Context, tx *sql.Tx, token int64) error {
		_, err := tx.ExecContext(ctx, update, token)
		return err
	}
	return pair{
		name: "transaction: begin, update, commit",
		unfenced: func(ctx context.Context, token int64) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := write(ctx, tx, token); err != nil {
				return err
			}
			return tx.Commit()
		},
		fenced: func(ctx context.Context, token int64) error {
			return f.Do(ctx, db, "item", token, func(ctx context.Context, tx *sql.Tx) error { return write(ctx, tx, token) })
		},
	}
}

func postgresPairs(db *sql.DB, f *fence.Fence) []pair {
	stmt := pair{
		name: "one statement (the psql form)",
		unfenced: func(ctx context.Context, token int64) error {
			_, err := db.ExecContext(ctx, "UPDATE item SET v = $1 WHERE id = 1", token)
			return err
		},
		fenced: func(ctx context.Context, token int64) error {
			_, err := db.ExecContext(ctx, `WITH fence AS (
    INSERT INTO zklock_fence AS f (resource, token) VALUES ('item', $1)
    ON CONFLICT (resource) DO UPDATE SET token = CASE
        WHEN f.token <= EXCLUDED.token THEN EXCLUDED.token
        ELSE CAST('zklock: stale token ' || EXCLUDED.token || ', ' || f.token || ' was admitted' AS bigint)
    END
    RETURNING token
)
UPDATE item SET v = fence.token FROM fence WHERE item.id = 1`, token)
			return err
		},
	}
	return []pair{txPair(db, f, "UPDATE item SET v = $1 WHERE id = 1"), stmt}
}

// token is the last token used: every fenced write must be admitted, so
// tokens only grow, across pairs too.
var token int64

func next() int64 { token++; return token }

// run measures p over interleaved repeats and prints its row.
func run(ctx context.Context, p pair, repeats, n int) error {
	// Warm up: every statement prepared on the connection.
	for range 20 {
		if err := p.unfenced(ctx, next()); err != nil {
			return err
		}
		if err := p.fenced(ctx, next()); err != nil {
			return err
		}
	}
	if p.countTrips != nil {
		var err1, err2 error
		p.tripsU, err1 = p.countTrips(p.unfenced, next())
		p.tripsF, err2 = p.countTrips(p.fenced, next())
		if err1 != nil || err2 != nil {
			return fmt.Errorf("%v %v", err1, err2)
		}
	}
	var us, fs, ratios []float64
	for r := range repeats {
		order := []func(context.Context, int64) error{p.unfenced, p.fenced}
		if r%2 == 1 {
			slices.Reverse(order)
		}
		per := map[int]float64{}
		for i, w := range order {
			start := time.Now()
			for range n {
				if err := w(ctx, next()); err != nil {
					return err
				}
			}
			per[i] = float64(time.Since(start).Microseconds()) / float64(n)
		}
		u, f := per[0], per[1]
		if r%2 == 1 {
			u, f = per[1], per[0]
		}
		us, fs, ratios = append(us, u), append(fs, f), append(ratios, f/u)
	}
	trips := "not counted (in-process)"
	if p.countTrips != nil {
		trips = fmt.Sprintf("%d / %d", p.tripsU, p.tripsF)
	}
	fmt.Printf("| %s | %s | %s | %.0f | %.0f | %.2f |\n", p.engine, p.name, trips, median(us), median(fs), median(ratios))
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
