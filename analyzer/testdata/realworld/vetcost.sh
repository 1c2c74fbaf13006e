#!/bin/sh
# vetcost.sh compares oncelint's cost with a forced go vet on the corpus's own packages:
# for each repository named (owner/name, as in repos.txt), it warms a build cache once
# with go build, then, ROUNDS times (default 2), alternates from a fresh copy of that cache
# (so go vet has no cached results and both start from the same compiled dependencies):
#
#   go vet PACKAGES                 go vet's own analyzers
#   oncelint PACKAGES               oncelint standalone (go vet with oncelint under the hood)
#
# (go run ./internal/realworld/measure -cost prints the same two runs' ratios per
# repository.)
#
# and prints wall time, CPU time (user + system) and peak RSS (of the largest process) of
# each. ONCELINT names the binary (default: oncelint on PATH); the trees come from
# trees.sh. The scratch caches go to a temporary directory that is removed at the end.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repos=${ONCE_REALWORLD_REPOS:-$here/repos.txt}
lint=$(command -v "${ONCELINT:-oncelint}")
rounds=${ROUNDS:-2}
if [ -n "${ONCE_REALWORLD_TREES:-}" ]; then
	trees=$ONCE_REALWORLD_TREES
else
	trees=${XDG_CACHE_HOME:-$HOME/.cache}/once-realworld
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export GOTOOLCHAIN=local GOWORK=off

measure() { # label cmd...
	label=$1
	shift
	rm -rf "$scratch/run" && cp -a "$scratch/warm" "$scratch/run"
	out=$(GOCACHE="$scratch/run" /usr/bin/time -f '%e %U %S %M' "$@" 2>&1 >/dev/null | tail -1)
	set -- $out
	printf '%-18s wall %7.1f s  cpu %7.1f s  peak %6d MB\n' "$label" "$1" "$(echo "$2 + $3" | bc)" "$(($4 / 1024))"
}

for repo in "$@"; do
	line=$(grep -v '^#' "$repos" | awk -v r="$repo" '$1 == r')
	[ -n "$line" ] || { echo "vetcost.sh: $repo is not in repos.txt" >&2; exit 2; }
	set -- $line
	dir=$trees/$(echo "$1" | tr / +)/$3
	shift 3
	pkgs=$*
	echo "== $repo: $pkgs"
	rm -rf "$scratch/warm"
	(cd "$dir" && GOCACHE="$scratch/warm" go build $pkgs)
	i=1
	while [ "$i" -le "$rounds" ]; do
		(cd "$dir" && measure "go vet" go vet $pkgs || true)
		(cd "$dir" && measure "oncelint" "$lint" -test=false $pkgs || true)
		i=$((i + 1))
	done
done
