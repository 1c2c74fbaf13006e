package ideas

import (
	"context"
	"encoding/json"
	"testing"
)

// The allowance counts completed runs and fresh runs in flight this month, and nothing else:
// not stale runs, not failed ones, not runs support has reset, not last month's.
func TestAllowance_CountsCompletedAndFreshInFlightOnly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	if err := CreateOrganisation(ctx, e.db, 2, "Other"); err != nil {
		t.Fatal(err)
	}
	// Runs are written as they are left in the table by each way a run can end; the clock
	// is moved for the old ones. Only one run per organisation can be open at a time.
	for _, r := range []struct {
		org                  int64
		status, age, resetAt string
		counts               bool
	}{
		{org, "completed", "1 minute", "", true},
		{org, "researching", "5 minutes", "", true}, // in flight, with a worker
		{org, "failed", "2 minutes", "", false},
		{org, "stale", "40 minutes", "", false},
		{org, "completed", "3 minutes", "now()", false},
		{2, "completed", "1 minute", "", false}, // another organisation's
	} {
		finished := "now()"
		if r.status == "researching" {
			finished = "NULL"
		}
		reset := "NULL"
		if r.resetAt != "" {
			reset = r.resetAt
		}
		if _, err := e.db.Exec(ctx, `INSERT INTO runs (org_id, status, created_at, finished_at, reset_at)
			VALUES ($1, $2, now() - $3::interval, `+finished+`, `+reset+`)`, r.org, r.status, r.age); err != nil {
			t.Fatal(err)
		}
	}
	// Last month's completed run, whatever today's date.
	if _, err := e.db.Exec(ctx, `INSERT INTO runs (org_id, status, created_at, finished_at)
		VALUES ($1, 'completed', date_trunc('month', now(), 'UTC') - interval '1 day', now())`, org); err != nil {
		t.Fatal(err)
	}
	if u := e.usage(); u.Used != 2 || u.Left() != 0 {
		t.Fatalf("usage %+v, want 2 used and none left", u)
	}

	// The landing page says the same, and the button sends the press to the run in flight.
	resp, err := e.client.Get(e.srv.URL + LandingPath(org))
	if err != nil {
		t.Fatal(err)
	}
	var page Landing
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if err != nil || page.Usage.Used != 2 || len(page.Runs) != 6 {
		t.Fatalf("landing page: %+v (%v), want 2 used and 6 runs", page, err)
	}
	run, _ := e.press()
	if got := e.status(run); got != StatusResearching {
		t.Fatalf("press went to a %s run, want the one researching", got)
	}

	// The run in flight goes stale: it stops counting, and a press starts a new run.
	if _, err := e.db.Exec(ctx, `UPDATE runs SET created_at = now() - interval '25 minutes' WHERE id = $1`, run); err != nil {
		t.Fatal(err)
	}
	if u := e.usage(); u.Used != 1 {
		t.Fatalf("usage %+v after the run in flight went stale, want 1 used", u)
	}
	next, _ := e.press()
	if next == 0 || next == run {
		t.Fatalf("press went to %d, want a new run", next)
	}
	if u := e.usage(); u.Used != 2 {
		t.Fatalf("usage %+v with the new run in flight, want 2 used", u)
	}
	// It fails: failed runs give the allowance back, and the next press starts again.
	if err := markFailed(ctx, e.db, next, "the provider is down"); err != nil {
		t.Fatal(err)
	}
	if again, _ := e.press(); again == 0 || again == next {
		t.Fatalf("press after a failed run went to %d, want a new run", again)
	}
	if _, loc := e.press(); loc == "/orgs/1?notice=allowance-used" {
		t.Fatalf("press with a run in flight went to %q, want that run", loc)
	}
	if _, err := e.db.Exec(ctx, `UPDATE runs SET status = 'completed', finished_at = now() WHERE org_id = $1 AND finished_at IS NULL`, org); err != nil {
		t.Fatal(err)
	}
	if _, loc := e.press(); loc != "/orgs/1?notice=allowance-used" {
		t.Fatalf("press with the allowance spent went to %q", loc)
	}
}

// Support gives the allowance back without deleting anything: the runs stay, and stop
// counting.
func TestAllowance_ResetGivesItBackAndKeepsTheRuns(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for range MonthlyAllowance {
		e.press()
		e.drain()
	}
	if _, loc := e.press(); loc != "/orgs/1?notice=allowance-used" {
		t.Fatalf("press with the allowance spent went to %q", loc)
	}
	if status, loc := e.post("/orgs/1/allowance/reset", nil); status != 303 || loc != "/orgs/1" {
		t.Fatalf("reset: %d %q", status, loc)
	}
	if u := e.usage(); u.Used != 0 {
		t.Fatalf("usage %+v after a reset, want 0 used", u)
	}
	if run, _ := e.press(); run == 0 {
		t.Fatal("press after a reset started nothing")
	}
	if got := e.runs(); got != MonthlyAllowance+1 {
		t.Errorf("%d runs, want %d: a reset deletes nothing", got, MonthlyAllowance+1)
	}
}
