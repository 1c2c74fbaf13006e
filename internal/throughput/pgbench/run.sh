#!/usr/bin/env bash
# What a Forever guard's two statements cost, against the floor, measured with pgbench on a
# server of your own (BENCHMARKS.md, "What bounds Forever's fresh keys"):
#
#   internal/throughput/pgbench/run.sh postgres://user@host:port/   [rounds] [seconds] [clients]
#
# It creates a database once_pgbench on that server (dropping one left by an earlier run),
# applies once's schema to it, and adds a table of its own, floor. Then, for each round, it
# empties the tables, checkpoints, and runs each script for the given seconds, by one client
# (or as many as asked, on two threads), synchronous_commit off (the statements' work, not
# the disk's flush), in an order that rotates from round to round, and prints each script's
# transactions per second and their mean. pgbench runs a script's statements each in its own
# transaction, so floor2 and forever are two commits each.

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
for f in "$root"/runtime/onceschema/schema/*.up.sql; do psql "$db" -q -v ON_ERROR_STOP=1 -f "$f" 2>/dev/null; done
psql "$db" -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE floor (key text PRIMARY KEY);
SQL
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/*.sql "$work/"
scripts=(floor floor2 claim forever)
n=${#scripts[@]}
for ((i = 0; i < rounds; i++)); do
	psql "$db" -q -c 'TRUNCATE floor, once.operations, once.checkpoints' -c CHECKPOINT
	for ((j = 0; j < n; j++)); do
		s=${scripts[$(((i + j) % n))]}
		tps=$(PGOPTIONS='-c synchronous_commit=off' "$pgbench" -n -M prepared -c "$clients" -j $((clients > 1 ? 2 : 1)) -T "$secs" -f "$work/$s.sql" "$db" 2>/dev/null | awk '/^tps/ {print $3}')
		echo "$s $tps"
	done
done | awk '{sum[$1] += $2; n[$1]++; runs[$1] = runs[$1] " " int($2)} END {for (s in sum) printf "%-18s mean %6.0f tx/s: %s\n", s, sum[s] / n[s], runs[s]}' | sort
