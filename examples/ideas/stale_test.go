package ideas

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// A run whose worker vanished (no failure hook ran) is closed by the stale rule at each point
// that asks about it. Here the run's job waited in the queue past StaleAfter: the next press
// is not blocked by it, the progress page shows it stale, it does not count, and when a
// worker finally reaches its job, the guard at the top skips it: nothing is paid for a run
// nobody is waiting for.
func TestStale_RunClosedWhileItsJobWaitedIsSkipped(t *testing.T) {
	t.Parallel()
	e := setup(t)
	old, _ := e.press()
	e.backdate(old, "21 minutes")

	if u := e.usage(); u.Used != 0 {
		t.Errorf("a stale run spends %d of the allowance, want 0", u.Used)
	}
	fresh, _ := e.press()
	if fresh == 0 || fresh == old {
		t.Fatalf("press beside a stale run went to %d, want a new run (old %d)", fresh, old)
	}
	if got := e.status(old); got != StatusStale {
		t.Fatalf("the old run is %s, want stale", got)
	}

	jobs := e.drain()
	if len(jobs) != 2 || jobs[0].RunID != old || jobs[0].Result != ResultSkipped || jobs[1].Result != ResultCompleted {
		t.Fatalf("the worker took %+v, want the stale run's job skipped and the new one completed", jobs)
	}
	if got := e.api.EffectsAt("/v1/research"); got != 1 {
		t.Errorf("research paid %d times, want 1 (only for the run someone waits for)", got)
	}
	if got := e.count(`SELECT count(*) FROM ideas WHERE run_id = $1`, old); got != 0 {
		t.Errorf("the stale run got %d ideas, want none", got)
	}
}

// The progress page applies the stale rule too: it never says "researching" for a run that
// no process is researching.
func TestStale_ProgressPageShowsAStaleRun(t *testing.T) {
	t.Parallel()
	e := setup(t)
	run, _ := e.press()
	e.backdate(run, "20 minutes 1 second")

	resp, err := e.client.Get(e.srv.URL + ProgressPath(run))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page Run
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("progress page: %d, %v", resp.StatusCode, err)
	}
	if page.State != StatusStale || page.FinishedAt == nil {
		t.Fatalf("progress page shows %q (finished %v), want stale and finished", page.State, page.FinishedAt)
	}
	if got := e.status(run); got != StatusStale {
		t.Fatalf("the run is %s in the table, want stale", got)
	}
}

// A run just inside StaleAfter is in flight: it blocks a second run and it counts.
func TestStale_RunInsideTheWindowIsInFlight(t *testing.T) {
	t.Parallel()
	e := setup(t)
	run, _ := e.press()
	e.backdate(run, "19 minutes 50 seconds")
	if again, _ := e.press(); again != run {
		t.Fatalf("press went to %d, want the run in flight %d", again, run)
	}
	if u := e.usage(); u.Used != 1 {
		t.Errorf("allowance used %d, want 1", u.Used)
	}
	if n, err := closeStale(context.Background(), e.db, "org_id", org); err != nil || n != 0 {
		t.Errorf("closeStale closed %d runs (%v), want 0", n, err)
	}
}
