package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zklock/zklock/fence"
)

// sqliteKeywords is SQLite's keyword list (sqlite.org/lang_keywords.html).
var sqliteKeywords = strings.Fields(`abort action add after all alter always analyze and as asc attach
autoincrement before begin between by cascade case cast check collate column commit conflict constraint
create cross current current_date current_time current_timestamp database default deferrable deferred
delete desc detach distinct do drop each else end escape except exclude exclusive exists explain fail
filter first following for foreign from full generated glob group groups having if ignore immediate in
index indexed initially inner insert instead intersect into is isnull join key last left like limit
match materialized natural no not nothing notnull null nulls of offset on or order others outer over
partition plan pragma preceding primary query raise range recursive references regexp reindex release
rename replace restrict returning right rollback row rows savepoint select set table temp temporary
then ties to transaction trigger unbounded union unique update using vacuum values view virtual when
where window with without`)

// Every keyword of PostgreSQL 15 and SQLite, tried as the fence table's
// name: New refuses exactly those that either engine refuses in the
// fence's statements (or in a query of the table by its bare name), so a
// name New accepts works on both, and New refuses no name that works.
func TestReservedWordsMatchEngines(t *testing.T) {
	pg, lite := openPostgres(t), openSQLite(t)
	ctx := testCtx(t)
	rows, err := pg.QueryContext(ctx, "SELECT word FROM pg_get_keywords()")
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		words[w] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, w := range sqliteKeywords {
		words[w] = true
	}
	refused := 0
	for w := range words {
		_, newErr := fence.New(fence.Postgres, fence.WithTable(w))
		pgErr := tryTable(ctx, pg, fence.Postgres, w)
		liteErr := tryTable(ctx, lite, fence.SQLite, w)
		works := pgErr == nil && liteErr == nil
		switch {
		case newErr == nil && !works:
			t.Errorf("New accepts %q, which fails: PostgreSQL %v; SQLite %v", w, pgErr, liteErr)
		case newErr != nil && works:
			t.Errorf("New refuses %q, which works on both: %v", w, newErr)
		case newErr != nil && !errors.Is(newErr, fence.ErrInvalidOption):
			t.Errorf("New(%q): %v, want ErrInvalidOption", w, newErr)
		case newErr != nil:
			refused++
		}
	}
	t.Logf("%d keywords tried, %d refused by New and an engine", len(words), refused)
}

// tryTable creates a fence table named w, admits through it and reads it,
// with the statements of New's dialect, the name bare (New would refuse
// it before a Fence is made).
func tryTable(ctx context.Context, db *sql.DB, d fence.Dialect, w string) error {
	stmts := []string{
		"CREATE TABLE IF NOT EXISTS %[1]s (resource text PRIMARY KEY, token bigint NOT NULL)",
		"INSERT INTO %[1]s AS f (resource, token) VALUES ('a', 1) ON CONFLICT (resource) DO UPDATE SET token = GREATEST(f.token, EXCLUDED.token) RETURNING token",
		"SELECT token FROM %[1]s WHERE resource = 'a'",
	}
	if d == fence.SQLite {
		stmts[0] = "CREATE TABLE IF NOT EXISTS %[1]s (resource TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL) WITHOUT ROWID"
		stmts[1] = "INSERT INTO %[1]s AS f (resource, token) VALUES ('a', 1) ON CONFLICT (resource) DO UPDATE SET token = max(f.token, excluded.token) RETURNING token"
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, fmt.Sprintf(q, w)); err != nil {
			return err
		}
	}
	return nil
}
