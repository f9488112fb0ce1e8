package fence_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/fence/pgtest"
	"go.uber.org/goleak"
	_ "modernc.org/sqlite"
)

// One PostgreSQL server serves the package's tests, started by the first
// test that needs it; each test works in a schema of its own.
var pg struct {
	once sync.Once
	s    *pgtest.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.s != nil {
		if err := pg.s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	// After the server's goroutine is gone: goleak.VerifyTestMain would
	// check before.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func postgres(t testing.TB) *pgtest.Server {
	t.Helper()
	pg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pg.s, pg.err = pgtest.Launch(ctx)
	})
	if pg.err != nil {
		t.Fatal(pg.err)
	}
	return pg.s
}

// engine is a database the fence is tested on.
type engine struct {
	name    string
	dialect fence.Dialect
	// open returns a database of the test's own, closed by t.Cleanup.
	open func(t testing.TB) *sql.DB
}

var engines = []engine{
	{"postgres", fence.Postgres, openPostgres},
	{"sqlite", fence.SQLite, openSQLite},
}

var schemaSeq atomic.Int64

// openPostgres returns a pool whose connections work in a new schema.
func openPostgres(t testing.TB) *sql.DB {
	t.Helper()
	s := postgres(t)
	schema := fmt.Sprintf("t%d_%s", schemaSeq.Add(1), sanitize(t.Name()))
	admin := openDB(t, "pgx", s.DSN())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	return openDB(t, "pgx", s.DSN()+" search_path="+schema)
}

// openSQLite returns a database in a new file. Transactions begin with
// BEGIN IMMEDIATE (the write lock at once) and wait up to testBusyTimeout
// for it.
func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fence.db")
	return openDB(t, "sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout("+testBusyTimeout+")&_pragma=journal_mode(WAL)")
}

// testBusyTimeout is the tests' SQLite busy_timeout in milliseconds: a
// minute, not the 10s the docs suggest, because SQLite's busy handler is
// not fair (a waiter sleeps and retries while others take the lock), and
// at load 40 with -race (make test beside other work) a writer among 16
// and one among 320 waited past 10s: SQLITE_BUSY with a busy timeout. The
// claims are that a busy timeout makes the writers wait, not how long.
const testBusyTimeout = "60000"

func openDB(t testing.TB, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

func sanitize(name string) string {
	s := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(name, "_"))
	return s[:min(len(s), 40)]
}

// newFence returns the engine's fence with its table created, and db; the
// statements of ddl run after, in order.
func newFence(t *testing.T, e engine, ddl ...string) (*fence.Fence, *sql.DB) {
	t.Helper()
	db := e.open(t)
	f := fenceOn(t, e.dialect, db)
	for _, q := range ddl {
		if _, err := db.ExecContext(testCtx(t), q); err != nil {
			t.Fatal(err)
		}
	}
	return f, db
}

// fenceOn returns the fence of dialect d with its table created in db.
func fenceOn(t *testing.T, d fence.Dialect, db *sql.DB) *fence.Fence {
	t.Helper()
	f, err := fence.New(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CreateTable(testCtx(t), db); err != nil {
		t.Fatal(err)
	}
	return f
}

// testCtx bounds what a test waits for.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// stored reads the fence's token for resource outside any transaction of
// the test (0: no row). SQLite reads $1 as a parameter too (a named one,
// bound by position).
func stored(t testing.TB, db *sql.DB, f *fence.Fence, resource string) int64 {
	t.Helper()
	var token int64
	err := db.QueryRowContext(testCtx(t), "SELECT token FROM "+f.Table()+" WHERE resource = $1", resource).Scan(&token)
	if err == sql.ErrNoRows {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return token
}
