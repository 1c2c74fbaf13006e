package onceops_test

import (
	"context"
	"testing"
	"time"

	"github.com/oncekit/once/runtime/onceops"
)

// The reaper deletes no row whose day is not rolled up: an operation with a short retain=
// claimed today stays until its day is counted, while an expired one of three days ago
// goes, and is still counted on its day.
func TestReapExpired_KeepsRowsOfDaysNotRolledUp(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO once.operations (name, scope, key, id, token, claimed_at, alive_at, settled_at, expires_at, state)
SELECT 'reports.Generate', '', k, gen_random_uuid(), 't', at, at, at, clock_timestamp() - interval '1 second', 'done'
FROM (VALUES ('old', statement_timestamp() - interval '3 days'), ('today', statement_timestamp())) v(k, at)`); err != nil {
		t.Fatal(err)
	}
	n, err := onceops.ReapExpired(ctx, pool, 0)
	if err != nil || n != 1 {
		t.Fatalf("ReapExpired = %d, %v; want the one operation of a day rolled up", n, err)
	}
	var left string
	var counted int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT string_agg(key, ',') FROM once.operations),
	(SELECT coalesce(sum(calls), 0) FROM once.guard_days WHERE day = ((statement_timestamp() - interval '3 days') AT TIME ZONE 'UTC')::date)`).
		Scan(&left, &counted); err != nil {
		t.Fatal(err)
	}
	if left != "today" || counted != 1 {
		t.Fatalf("left %q, the old day counts %d calls; want today's row kept and the reaped one counted", left, counted)
	}
}

// A day is rolled up only once it ended RollUpMargin ago: a claim of yesterday whose
// transaction commits after a roll-up inside the margin is counted when yesterday is rolled
// up later. (Rolled up at once, the day would have been counted without it, for good.)
func TestRollUp_CountsAClaimCommittedAfterMidnight(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The claim is made (claimed_at) yesterday, and its transaction is still open.
	if _, err := tx.Exec(ctx, `INSERT INTO once.operations (name, scope, key, id, token, claimed_at, alive_at, state)
VALUES ('reports.Generate', '', 'late', gen_random_uuid(), 't', date_trunc('day', statement_timestamp(), 'UTC') - interval '1 minute',
	date_trunc('day', statement_timestamp(), 'UTC') - interval '1 minute', 'open')`); err != nil {
		t.Fatal(err)
	}
	// An earlier claim of the same day, committed, so the roll-up has a day to start from.
	if _, err := pool.Exec(ctx, `INSERT INTO once.operations (name, scope, key, id, token, claimed_at, alive_at, state)
VALUES ('reports.Generate', '', 'early', gen_random_uuid(), 't', date_trunc('day', statement_timestamp(), 'UTC') - interval '2 hours',
	date_trunc('day', statement_timestamp(), 'UTC') - interval '2 hours', 'done')`); err != nil {
		t.Fatal(err)
	}
	// Yesterday ended less than the margin ago: a margin reaching past midnight.
	now := time.Now().UTC()
	margin := now.Sub(now.Truncate(24*time.Hour)) + time.Hour
	if days, err := onceops.RollUpWithMargin(ctx, pool, margin); err != nil || days != 0 {
		t.Fatalf("roll-up inside the margin: %d days, %v; want none", days, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if days, err := onceops.RollUpWithMargin(ctx, pool, 0); err != nil || days != 1 {
		t.Fatalf("roll-up past the margin: %d days, %v; want yesterday", days, err)
	}
	var calls int64
	if err := pool.QueryRow(ctx, `SELECT calls FROM once.guard_days
WHERE day = ((date_trunc('day', statement_timestamp(), 'UTC') - interval '1 day') AT TIME ZONE 'UTC')::date AND name = 'reports.Generate'`).Scan(&calls); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("yesterday counts %d calls, want 2 (the early one and the one committed after midnight)", calls)
	}
}
