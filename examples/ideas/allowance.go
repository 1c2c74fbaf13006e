package ideas

import (
	"context"
	"fmt"

	once "github.com/oncekit/once/runtime"
)

// MonthlyAllowance is how many generations an organisation gets a month.
const MonthlyAllowance = 2

// DailyResearchCap is how many research runs one organisation may pay for in a day. It sits
// under the monthly allowance as a safety net: whatever goes wrong in the counting above it
// (support resets, a bug), no organisation can spend more than this on research in a day.
const DailyResearchCap = 3

// Usage is an organisation's allowance this month.
type Usage struct {
	Used  int `json:"used"`
	Limit int `json:"limit"`
}

// Left reports how many generations the organisation can still start this month.
func (u Usage) Left() int { return max(u.Limit-u.Used, 0) }

// CountUsage counts the runs that spend org's allowance this month: completed runs, and runs
// in flight that still have a worker behind them (if those did not count, a press during a
// run could start one more and go over the limit). Stale runs do not count (the customer
// does not pay for a run that was cut off), failed runs do not (the allowance is spent only
// on results delivered), and runs support has reset do not. Refining or dismissing an idea creates no
// run, so it cannot count.
func CountUsage(ctx context.Context, db once.DB, org int64) (Usage, error) {
	u := Usage{Limit: MonthlyAllowance}
	err := db.QueryRow(ctx, `SELECT count(*) FROM runs
		WHERE org_id = $1
		  AND created_at >= date_trunc('month', now(), 'UTC')
		  AND reset_at IS NULL
		  AND (status = 'completed' OR (`+freshRun+`))`, org).Scan(&u.Used)
	if err != nil {
		return Usage{}, fmt.Errorf("counting the allowance of organisation %d: %w", org, err)
	}
	return u, nil
}

// ResetAllowance gives org its allowance for this month back without deleting anything:
// the month's runs stay, marked reset, and stop counting. It returns how many runs it reset.
func ResetAllowance(ctx context.Context, db once.DB, org int64) (int64, error) {
	tag, err := db.Exec(ctx, `UPDATE runs SET reset_at = now()
		WHERE org_id = $1 AND created_at >= date_trunc('month', now(), 'UTC') AND reset_at IS NULL`, org)
	if err != nil {
		return 0, fmt.Errorf("resetting the allowance of organisation %d: %w", org, err)
	}
	return tag.RowsAffected(), nil
}
