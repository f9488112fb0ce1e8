#!/usr/bin/env bash
# Prints a regular expression (for go test -run and -skip) matching the
# top-level tests of the Go package in the current directory that do not
# call t.Parallel in their own body: those that run alone, one after
# another, before the parallel ones start. make test runs them in a go test
# process of their own, beside the rest of the package (see the Makefile).
# Files behind a build constraint (the review tag) are left out. The match
# is by the source's text: a test wrongly counted here or not only changes
# which of the two processes runs it, never whether it runs.
set -euo pipefail
names=$(for f in *_test.go; do
	grep -q '^//go:build' "$f" && continue
	awk '
		function flush() { if (name != "" && !par) print name; name = "" }
		/^func Test[A-Za-z0-9_]*\(t \*testing\.T\)/ {
			flush(); match($0, /Test[A-Za-z0-9_]*/); name = substr($0, RSTART, RLENGTH); par = 0; next
		}
		/^func / { flush() }
		/^\tt\.Parallel\(\)/ { par = 1 }
		END { flush() }' "$f"
done | grep -vx TestMain | sort -u | paste -sd '|')
printf '^(%s)$\n' "$names"
