package fence

import "fmt"

// Dialect names the SQL of a database engine. Postgres and SQLite are
// built in and tested against real servers; docs/fencing.md gives the
// statements for MySQL, SQL Server and others, to run through
// database/sql directly.
type Dialect int

// The built-in dialects.
const (
	// Postgres is PostgreSQL 9.5 or later (INSERT ... ON CONFLICT), with any
	// database/sql driver (tested with pgx's stdlib).
	Postgres Dialect = iota + 1
	// SQLite is SQLite 3.35 or later (RETURNING), with any database/sql
	// driver (tested with modernc.org/sqlite, which needs no cgo).
	SQLite
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "Postgres"
	case SQLite:
		return "SQLite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// statements is a dialect's SQL; %[1]s is the table's name. create is run
// by CreateTable in one transaction, in order. admit takes
// the resource and the token ($1 and $2, or ?1 and ?2) and returns one row:
// the resource's token after the statement, the higher of the stored one
// and ours, and whether the row lock it took belongs to the transaction
// itself rather than to a savepoint's subtransaction (always true where a
// savepoint cannot release it). It always writes the row, so a refused
// caller learns the token that refused it in the same round trip, from the
// row version it locked.
type statements struct {
	create []string
	admit  string
}

var dialects = map[Dialect]statements{
	// The upsert locks the resource's row until the transaction ends, in
	// every isolation level. At READ COMMITTED, a conflicting row locked by
	// a concurrent transaction is waited for and then updated in its latest
	// committed version (PostgreSQL's documented ON CONFLICT DO UPDATE
	// guarantee: it inserts or updates, even a row no snapshot of ours can
	// see), so GREATEST compares against the latest token, never a stale
	// snapshot's. At REPEATABLE READ and above such a row fails the
	// statement with a serialization failure (SQLSTATE 40001) instead.
	Postgres: {
		// Two CREATE TABLE IF NOT EXISTS running at once can both find no
		// table and both insert its catalog rows: one then fails (23505 on
		// pg_type's name index, 42710 or 42P07). Under the advisory lock,
		// held to the transaction's end, the second creator runs after the
		// first committed and finds the table. The table's name is a checked
		// identifier, safe in a literal.
		//
		// The key is one constant for every fence table ("zklk", 0), not the
		// table's name: one table has many spellings (t, public.t, T), and
		// creators that spell it differently must take turns too.
		create: []string{`SELECT pg_advisory_xact_lock(2053860459, 0)`, `CREATE TABLE IF NOT EXISTS %[1]s (
	resource text PRIMARY KEY,
	token bigint NOT NULL
)`},
		//
		// ROLLBACK TO SAVEPOINT releases the row locks taken after the
		// savepoint, so an admission made in a savepoint that is then
		// rolled back would leave the transaction writing, unfenced, while
		// a later token is admitted and commits. The row version the
		// statement wrote has the xid of the (sub)transaction that wrote it
		// as its xmin; txid_current() is the top-level transaction's (with
		// its epoch above 32 bits): they differ exactly inside a
		// subtransaction, and Admit then refuses, in the same round trip.
		admit: `INSERT INTO %[1]s AS f (resource, token) VALUES ($1, $2)
ON CONFLICT (resource) DO UPDATE SET token = GREATEST(f.token, EXCLUDED.token)
RETURNING token, f.xmin::text = (txid_current() % 4294967296)::text`,
	},
	// SQLite runs one writing transaction at a time per database: the
	// statement reads and raises the row under the database's write lock.
	// The scalar max() of two arguments is SQLite's GREATEST.
	SQLite: {
		create: []string{`CREATE TABLE IF NOT EXISTS %[1]s (
	resource TEXT PRIMARY KEY NOT NULL,
	token INTEGER NOT NULL
) WITHOUT ROWID`},
		// A savepoint rolled back keeps the database's write lock (SQLite
		// has no row locks): the transaction stays fenced.
		admit: `INSERT INTO %[1]s AS f (resource, token) VALUES (?1, ?2)
ON CONFLICT (resource) DO UPDATE SET token = max(f.token, excluded.token)
RETURNING token, 1`,
	},
}
