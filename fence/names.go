package fence

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxResource is the longest resource name the fence admits, in bytes.
// PostgreSQL refuses an index entry over 2,704 bytes (a third of a page,
// for B-tree version 4), so a longer name in the fence table's primary key
// fails the first Admit of a resource; 1,024 bytes also fit the keys of
// MySQL (3,072 bytes) and SQL Server (1,700 for a nonclustered key), so one
// name is fenced the same on every engine of docs/fencing.md.
const MaxResource = 1024

// checkResource refuses a name that no engine stores as it is: empty, over
// MaxResource, not UTF-8 or holding a NUL (PostgreSQL's text holds
// neither). Its error quotes at most the first 32 bytes of the name: the
// name may be a request's path, of any length.
func checkResource(resource string) error {
	switch {
	case resource == "":
		return fmt.Errorf("%w: empty", ErrInvalidResource)
	case len(resource) > MaxResource:
		return fmt.Errorf("%w: %d bytes, over the limit of %d (MaxResource): %q…", ErrInvalidResource, len(resource), MaxResource, prefix(resource))
	case !utf8.ValidString(resource):
		return fmt.Errorf("%w: not UTF-8: %q", ErrInvalidResource, prefix(resource))
	case strings.IndexByte(resource, 0) >= 0:
		return fmt.Errorf("%w: holds a NUL byte: %q", ErrInvalidResource, prefix(resource))
	}
	return nil
}

func prefix(s string) string {
	const n = 32
	if len(s) <= n {
		return s
	}
	return s[:n]
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

// checkTable refuses a table name that the fence's SQL cannot carry
// unquoted: not a plain identifier, or a keyword either engine refuses as a
// table or schema name (the fence's SQL and docs/fencing.md's use the name
// unquoted, and so does a caller's own SQL through Table).
func checkTable(name string) error {
	if !identifier.MatchString(name) {
		return fmt.Errorf("%w: table name %q is not a plain SQL identifier", ErrInvalidOption, name)
	}
	for part := range strings.SplitSeq(name, ".") {
		if reserved[strings.ToLower(part)] {
			return fmt.Errorf("%w: table name %q: %q is an SQL keyword", ErrInvalidOption, name, part)
		}
	}
	return nil
}

// reserved holds the words that PostgreSQL 15 (pg_get_keywords() with
// catcode R or T: reserved, and reserved but a function or type name) or
// SQLite 3 refuse as an unquoted table name in the fence's statements,
// found by trying every keyword of both (TestReservedWordsMatchEngines
// checks the list against both engines).
var reserved = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`
	add all alter analyse analyze and any array as asc asymmetric authorization
	autoincrement between binary both case cast check collate collation column
	commit concurrently constraint create cross current_catalog current_date
	current_role current_schema current_time current_timestamp current_user
	default deferrable delete desc distinct do drop else end escape except
	exists false fetch for foreign freeze from full grant group having if ilike
	in index initially inner insert intersect into is isnull join lateral
	leading left like limit localtime localtimestamp natural not nothing notnull
	null offset on only or order outer overlaps placing primary references
	returning right select session_user set similar some symmetric table
	tablesample then to trailing transaction true union unique update user using
	values variadic verbose when where window with`) {
		m[w] = true
	}
	return m
}()
