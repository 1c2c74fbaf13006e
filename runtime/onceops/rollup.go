package onceops

import (
	"context"
	"fmt"
	"time"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
)

// rollUpDaySQL counts one UTC day's calls of the forever and open guards, per guard, into
// once.guard_days, and marks the day rolled up, in one statement. Both reads are ranges of a
// block range index (claims come in time order). A day rolled up twice, by two runs at once,
// ends with the same rows: the counts are those of the rows, not increments.
const rollUpDaySQL = `WITH bounds AS (
	SELECT $1::date AS day, $1::date::timestamp AT TIME ZONE 'UTC' AS lo, ($1::date + 1)::timestamp AT TIME ZONE 'UTC' AS hi
), counted AS (
	INSERT INTO once.guard_days AS g (day, kind, name, calls, done, failed, released, in_flight, uncertain, retried, stale)
	SELECT b.day, 'forever', o.name, count(*), count(*) FILTER (WHERE o.state = 'done'), count(*) FILTER (WHERE o.state = 'failed'),
		count(*) FILTER (WHERE o.state = 'released'), count(*) FILTER (WHERE o.state = 'open'),
		count(*) FILTER (WHERE o.state = 'uncertain'), coalesce(sum(o.attempts - 1), 0), 0
	FROM bounds b JOIN once.operations o ON o.claimed_at >= b.lo AND o.claimed_at < b.hi GROUP BY b.day, o.name
	UNION ALL
	SELECT b.day, 'open', c.name, count(*), count(*) FILTER (WHERE c.state = 'done'), count(*) FILTER (WHERE c.state = 'failed'),
		0, count(*) FILTER (WHERE c.state = 'open'), 0, 0, count(*) FILTER (WHERE c.state = 'stale')
	FROM bounds b JOIN once.open_claims c ON c.opened_at >= b.lo AND c.opened_at < b.hi GROUP BY b.day, c.name
	ON CONFLICT (day, kind, name) DO UPDATE SET calls = excluded.calls, done = excluded.done, failed = excluded.failed,
		released = excluded.released, in_flight = excluded.in_flight, uncertain = excluded.uncertain,
		retried = excluded.retried, stale = excluded.stale
)
INSERT INTO once.rolled_days (day) SELECT day FROM bounds ON CONFLICT (day) DO NOTHING`

// RollUpMargin is how long after its end a UTC day is rolled up. Until then it is counted
// live, so that what lands late is counted: a claim whose transaction commits after
// midnight, and the outcome of a claim in flight at midnight, whose holder has by then
// settled it or shown no life for longer than the default stale windows (20 minutes, or 45 s
// with a heartbeat).
const RollUpMargin = time.Hour

// RollUp counts every UTC day not rolled up yet that ended at least RollUpMargin ago (from
// the first day with a claim, or the day after the last one rolled up) into
// once.guard_days, per guard, and returns how many days it counted. The operator console's
// overview reads those days from there and counts only the rest (today, and days not
// rolled up) from the claims themselves, so a window of weeks costs a few rows per day;
// without roll-ups it counts them all.
//
// A day is counted once, as its calls stand then: a call settled or resolved later is shown
// with the state it had (the console counts uncertain operations live). ReapExpired rolls up
// first, and deletes no row of a day not rolled up, so a day's calls are counted before
// their rows are deleted. Run it, or the reaper,
// from a scheduled job; a run is idempotent, and one day per statement.
func RollUp(ctx context.Context, db once.DB) (days int, err error) {
	return rollUp(ctx, db, RollUpMargin)
}

// rollUp is RollUp with the days that ended less than margin ago left out.
func rollUp(ctx context.Context, db once.DB, margin time.Duration) (days int, err error) {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return 0, err
	}
	var next, today *time.Time
	// The first day to count: after the last rolled up, else the first day with a claim (a
	// whole-table read, once).
	if err := db.QueryRow(ctx, `SELECT coalesce((SELECT max(day) + 1 FROM once.rolled_days),
	(SELECT least((SELECT min(claimed_at) FROM once.operations), (SELECT min(opened_at) FROM once.open_claims)) AT TIME ZONE 'UTC')::date),
	((statement_timestamp() - $1::bigint * interval '1 microsecond') AT TIME ZONE 'UTC')::date`, dbcall.Micros(margin)).Scan(&next, &today); err != nil {
		return 0, fmt.Errorf("once: roll-up: finding the days to count: %w", err)
	}
	if next == nil {
		return 0, nil
	}
	for d := *next; d.Before(*today) && ctx.Err() == nil; d = d.AddDate(0, 0, 1) {
		if _, err := db.Exec(ctx, rollUpDaySQL, d); err != nil {
			return days, fmt.Errorf("once: roll-up of %s: %w", d.Format(time.DateOnly), err)
		}
		days++
	}
	return days, ctx.Err()
}
