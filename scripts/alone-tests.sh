#!/usr/bin/env bash
# Prints a regular expression (for go test -run and -skip) matching the
# top-level tests of the Go package in the current directory that do not
# call t.Parallel in their own body: those that run alone, one after
# another, before the parallel ones start. make test runs them in go test
# processes of their own, beside the rest of the package (see the Makefile).
# Files behind a build constraint (the review tag) are left out. The match
# is by the source's text: a test wrongly counted here or not only changes
# which process runs it, never whether it runs.
#
# With an argument K/N (1 <= K <= N) it prints only the K-th of N shares:
# the tests dealt, longest first, each to the share with the least time so
# far, by the seconds in scripts/alone-weights.txt (1 for a test it does not
# list). Every test is in exactly one share; ties go to the lower share.
set -euo pipefail
part=${1:-}
here=$(cd "$(dirname "$0")" && pwd)
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
done | grep -vx TestMain | sort -u)
if [[ -n $part ]]; then
	if ! [[ $part =~ ^([0-9]+)/([0-9]+)$ ]] || ((BASH_REMATCH[1] < 1 || BASH_REMATCH[1] > BASH_REMATCH[2])); then
		echo "alone-tests.sh: want K/N with 1 <= K <= N, got $part" >&2
		exit 2
	fi
	k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
	names=$(awk -v k="$k" -v n="$n" '
		FNR == NR { if ($0 !~ /^#/ && NF == 2) w[$2] = $1; next }
		{ print (($0 in w) ? w[$0] : 1), $0 }' "$here/alone-weights.txt" - <<<"$names" |
		sort -k1,1nr -k2,2 |
		awk -v k="$k" -v n="$n" '
			{ best = 1; for (i = 2; i <= n; i++) if (load[i] < load[best]) best = i
			  load[best] += $1; if (best == k) print $2 }')
fi
printf '^(%s)$\n' "$(paste -sd '|' <<<"$names")"
