package chaos

import (
	"cmp"
	"maps"
	"slices"
)

// PGFigures is what the report says of the PostgreSQL resource.
type PGFigures struct {
	Writes map[string]int // by outcome (ResOK, ResRefused, ResUnknown, "unknown, committed", ResSkipped)
	// RefusedFrozen counts the refusals of writes whose holder's process
	// was frozen (a client-pause) during the hold, before the refusal came:
	// before the write was sent, or between two of its round trips.
	RefusedFrozen int
	Committed     map[string]int // committed writes, by resource
}

// checkPostgres holds the PostgreSQL resource to the fence's promise: for
// each resource, the tokens of the committed writes never go down in
// commit order. The order is the counter's: each committed write read the
// value the one before it committed and wrote one more, so the values of a
// resource's rows must be 1, 2, 3... each once (two transactions at once
// would read the same value), and the rows in that order must have tokens
// that never decrease. It also matches the workers' logged writes with the
// rows (an acknowledged write without its row, a refused or skipped write
// with one, a row no write logged in a process that was not killed) and
// checks the final counter and the fence's stored token against the rows.
func checkPostgres(r *Outcome, ivs []Interval, rep *Report) {
	if r.PG == nil {
		return
	}
	rep.PG = &PGFigures{Writes: map[string]int{}, Committed: map[string]int{}}
	rows := map[writeKey]PGRow{}
	byRes := map[string][]PGRow{}
	for _, row := range r.PG.Rows {
		rows[writeKey{row.Proc, row.W}] = row
		byRes[row.Resource] = append(byRes[row.Resource], row)
	}
	matchPGWrites(r, ivs, rows, rep)
	for _, res := range slices.Sorted(maps.Keys(byRes)) {
		checkPGOrder(res, byRes[res], rep)
	}
	for _, res := range slices.Sorted(maps.Keys(r.PG.Counters)) {
		list := byRes[res]
		rep.PG.Committed[res] = len(list)
		if n := r.PG.Counters[res]; n != int64(len(list)) {
			rep.violate("postgres: %s: final counter %d but %d fenced writes committed", res, n, len(list))
		}
		var top int64
		for _, row := range list {
			top = max(top, row.Tok)
		}
		if got := r.PG.Fence[res]; got != top {
			rep.violate("postgres: %s: the fence keeps token %d, the highest committed is %d", res, got, top)
		}
	}
}

// checkPGOrder walks one resource's rows in value order.
func checkPGOrder(res string, list []PGRow, rep *Report) {
	slices.SortStableFunc(list, func(a, b PGRow) int { return cmp.Compare(a.V, b.V) })
	var bad int
	for i, row := range list {
		if row.V != int64(i+1) {
			if bad++; bad <= 5 {
				rep.violate("postgres: %s: value %d written by %s write %d (token %d) where %d belongs: two fenced transactions ran at once",
					res, row.V, row.Proc, row.W, row.Tok, i+1)
			}
			continue
		}
		if prev := list[max(i-1, 0)]; i > 0 && row.Tok < prev.Tok {
			if bad++; bad <= 5 {
				rep.violate("postgres: %s: stale write committed: %s write %d with token %d after %s's token %d (value %d after %d)",
					res, row.Proc, row.W, row.Tok, prev.Proc, prev.Tok, row.V, prev.V)
			}
		}
	}
	if bad > 5 {
		rep.violate("postgres: %s: %d more writes out of order", res, bad-5)
	}
}

// matchPGWrites matches the logged writes with the rows and counts them.
func matchPGWrites(r *Outcome, ivs []Interval, rows map[writeKey]PGRow, rep *Report) {
	byHolder := map[holdKey][]Interval{}
	for _, iv := range ivs {
		k := holdKey{iv.Proc, iv.Prim, iv.G}
		byHolder[k] = append(byHolder[k], iv)
	}
	logged := map[writeKey]bool{}
	for _, e := range r.Events {
		if e.Ev != EvPGWrite {
			continue
		}
		k := writeKey{e.Proc, e.W}
		logged[k] = true
		_, ok := rows[k]
		rep.PG.Writes[e.Res]++
		switch {
		case e.Res == ResUnknown && ok:
			rep.PG.Writes["unknown, committed"]++
		case e.Res == ResOK && !ok:
			rep.violate("postgres: %s: write %d by %s acknowledged but not committed (no row)", e.Prim, e.W, e.Proc)
		case (e.Res == ResRefused || e.Res == ResSkipped) && ok:
			rep.violate("postgres: %s: write %d by %s reported %s but committed", e.Prim, e.W, e.Proc, e.Res)
		}
		if e.Res != ResRefused {
			continue
		}
		if iv, ok := holdOf(byHolder[holdKey{e.Proc, e.Prim, e.G}], e); ok {
			// A freeze that began by the reply: one that caught the write
			// between two of its round trips counts.
			if _, frozen := freezeDuring(r, iv, e.T1); frozen {
				rep.PG.RefusedFrozen++
			}
		}
	}
	killed := map[string]bool{}
	for _, e := range r.Exits {
		killed[e.Proc] = killed[e.Proc] || e.Killed
	}
	for _, k := range slices.SortedFunc(maps.Keys(rows), func(a, b writeKey) int {
		return cmp.Or(cmp.Compare(a.proc, b.proc), cmp.Compare(a.w, b.w))
	}) {
		if !logged[k] && !killed[k.proc] {
			rep.violate("postgres: row of write %d by %s (value %d) but no such write logged", k.w, k.proc, rows[k].V)
		}
	}
}
