package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zklock/zklock/fence"
)

// SQLite makes a writer that finds the database locked fail at once
// (SQLITE_BUSY) unless the connection has a busy timeout: the fence does
// not open the database, so the DSN must set one. 320 fenced writes at
// once, each its own transaction: with busy_timeout none fails; without,
// the count that failed with SQLITE_BUSY is logged (docs/fencing.md gives
// it), and no write fails otherwise. Either way no stale write commits.
func TestSQLiteBusyTimeout(t *testing.T) {
	const writes = 320
	for _, c := range []struct {
		name, params string
		timeout      bool
	}{
		{"immediate, busy_timeout", "_txlock=immediate&_pragma=busy_timeout(" + testBusyTimeout + ")&_pragma=journal_mode(WAL)", true},
		{"deferred, busy_timeout", "_pragma=busy_timeout(" + testBusyTimeout + ")&_pragma=journal_mode(WAL)", true},
		{"immediate, none", "_txlock=immediate&_pragma=journal_mode(WAL)", false},
		{"deferred, none", "_pragma=journal_mode(WAL)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, "sqlite", "file:"+filepath.Join(t.TempDir(), "fence.db")+"?"+c.params)
			f := fenceOn(t, fence.SQLite, db)
			ctx := testCtx(t)
			if _, err := db.ExecContext(ctx, "CREATE TABLE log (seq INTEGER PRIMARY KEY, token INTEGER NOT NULL)"); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var busy, stale, ok int
			var wg sync.WaitGroup
			start := make(chan struct{})
			for tok := int64(1); tok <= writes; tok++ {
				wg.Go(func() {
					<-start
					err := f.Do(ctx, db, "r", tok, func(ctx context.Context, tx *sql.Tx) error {
						_, err := tx.ExecContext(ctx, "INSERT INTO log (token) VALUES (?1)", tok)
						return err
					})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok++
					case errors.Is(err, fence.ErrStaleToken):
						stale++
					case strings.Contains(err.Error(), "SQLITE_BUSY"):
						busy++
					default:
						t.Errorf("write %d: %v", tok, err)
					}
				})
			}
			close(start)
			wg.Wait()
			var committed, lower int
			if err := db.QueryRowContext(ctx, "SELECT count(*), (SELECT count(*) FROM log a WHERE EXISTS (SELECT 1 FROM log b WHERE b.seq < a.seq AND b.token > a.token)) FROM log").Scan(&committed, &lower); err != nil {
				t.Fatal(err)
			}
			if committed != ok || lower != 0 {
				t.Errorf("%d committed for %d admitted; %d committed after a higher token", committed, ok, lower)
			}
			if c.timeout && busy > 0 {
				t.Errorf("%d of %d writes failed SQLITE_BUSY with a busy timeout", busy, writes)
			}
			t.Logf("%d of %d concurrent fenced writes failed SQLITE_BUSY, %d admitted, %d refused as stale", busy, writes, ok, stale)
		})
	}
}
