package fence_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/fence/internal/roundtrip"
)

// The fence costs one round trip on PostgreSQL, counted on the wire: a
// fenced transaction (begin, Admit, update, commit) makes one more than the
// same transaction unfenced, and the fence carried in the update's own
// statement (docs/fencing.md's psql form) makes none.
func TestAdmitIsOneRoundTrip(t *testing.T) {
	plain := openPostgres(t) // its schema, through an uncounted pool
	var schema string
	ctx := testCtx(t)
	if err := plain.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	var trips roundtrip.Counter
	db, err := roundtrip.OpenPostgres(postgres(t).DSN()+" search_path="+schema, &trips)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	f, _ := fence.New(fence.Postgres)
	if err := f.CreateTable(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE item (id int PRIMARY KEY, v bigint); INSERT INTO item VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	token := int64(0)
	update := func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE item SET v = $1 WHERE id = 1", token)
		return err
	}
	writes := map[string]func() error{
		"unfenced transaction": func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := update(ctx, tx); err != nil {
				return err
			}
			return tx.Commit()
		},
		"fenced transaction": func() error { return f.Do(ctx, db, "item", token, update) },
		"unfenced statement": func() error {
			_, err := db.ExecContext(ctx, "UPDATE item SET v = $1 WHERE id = 1", token)
			return err
		},
		"fenced statement": func() error {
			_, err := db.ExecContext(ctx, fencedUpdate, "item", token)
			return err
		},
	}
	count := map[string]int64{}
	for name, w := range writes {
		for i := range 3 { // the first use on a connection prepares the statement
			token++
			before := trips.Load()
			if err := w(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if i == 2 {
				count[name] = trips.Load() - before
			}
		}
	}
	t.Logf("round trips per write: %v", count)
	if count["fenced transaction"] != count["unfenced transaction"]+1 || count["fenced statement"] != count["unfenced statement"] {
		t.Errorf("round trips %v: want the fenced transaction one more than the unfenced one, the fenced statement as many as the plain one", count)
	}
}

// fencedUpdate is the psql form of docs/fencing.md with parameters: the
// fence's upsert in the update's own statement.
const fencedUpdate = `WITH fence AS (
    INSERT INTO zklock_fence AS f (resource, token) VALUES ($1, $2)
    ON CONFLICT (resource) DO UPDATE SET token = CASE
        WHEN f.token <= EXCLUDED.token THEN EXCLUDED.token
        ELSE CAST('zklock: stale token ' || EXCLUDED.token || ', ' || f.token || ' was admitted' AS bigint)
    END
    RETURNING token
)
UPDATE item SET v = fence.token FROM fence WHERE item.id = 1`
