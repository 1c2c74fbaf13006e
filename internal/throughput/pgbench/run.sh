#!/usr/bin/env bash
# What a Forever guard's two statements cost, against the floor, measured with pgbench on a
# server of your own (BENCHMARKS.md, "What bounds Forever's fresh keys"):
#
#   internal/throughput/pgbench/run.sh postgres://user@host:port/   [rounds] [seconds] [clients]
#
# It creates a database once_pgbench on that server (dropping one left by an earlier run),
# applies once's schema to it, and adds two tables of its own: floor, and
# once.operations_unchecked, a copy of once.operations without its CHECK constraints (and
# without the foreign key of once.checkpoints that points at it). Then,
# for each round, it empties the tables, checkpoints, and runs each script for the given
# seconds, by one client (or as many as asked, on two threads), synchronous_commit off (the statements' work, not the disk's flush),
# in an order that rotates from round to round, and prints each script's transactions per
# second and their mean.
set -euo pipefail
url=${1:?usage: run.sh postgres://user@host:port/ [rounds] [seconds] [clients]}
rounds=${2:-12}
secs=${3:-4}
clients=${4:-1}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=$(pg_config --bindir 2>/dev/null || true)
pgbench=${bin:+$bin/}pgbench
psql "$url" -q -v ON_ERROR_STOP=1 -c 'SET client_min_messages = warning' -c 'DROP DATABASE IF EXISTS once_pgbench' -c 'CREATE DATABASE once_pgbench'
db="${url%/}/once_pgbench"
for f in "$root"/runtime/schema/*.up.sql; do psql "$db" -q -v ON_ERROR_STOP=1 -f "$f" 2>/dev/null; done
psql "$db" -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE floor (key text PRIMARY KEY);
CREATE TABLE once.operations_unchecked (LIKE once.operations INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING INDEXES) WITH (fillfactor = 80);
SQL
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/*.sql "$work/"
sed 's/once\.operations /once.operations_unchecked /g' "$here/claim.sql" > "$work/claim_unchecked.sql"
sed 's/once\.operations /once.operations_unchecked /g' "$here/forever.sql" > "$work/forever_unchecked.sql"
scripts=(floor claim claim_ref_given claim_unchecked forever forever_unchecked)
n=${#scripts[@]}
for ((i = 0; i < rounds; i++)); do
	psql "$db" -q -c 'TRUNCATE floor, once.operations, once.checkpoints, once.operations_unchecked' -c CHECKPOINT
	for ((j = 0; j < n; j++)); do
		s=${scripts[$(((i + j) % n))]}
		tps=$(PGOPTIONS='-c synchronous_commit=off' "$pgbench" -n -M prepared -c "$clients" -j $((clients > 1 ? 2 : 1)) -T "$secs" -f "$work/$s.sql" "$db" 2>/dev/null | awk '/^tps/ {print $3}')
		echo "$s $tps"
	done
done | awk '{sum[$1] += $2; n[$1]++; runs[$1] = runs[$1] " " int($2)} END {for (s in sum) printf "%-18s mean %6.0f tx/s: %s\n", s, sum[s] / n[s], runs[s]}' | sort
