package ideas

import (
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/internal/fakeprovider"
)

// The failure hook: when the queue gives up on a job, its run is marked failed at once, and
// a failed run does not spend the allowance.
func TestWorker_FailureHookMarksTheRunFailed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.worker.MaxAttempts = 3
	run, _ := e.press()
	e.api.FailNext(3, 503)

	jobs := e.drain()
	if len(jobs) != 3 || jobs[0].Result != ResultRetry || jobs[1].Result != ResultRetry || jobs[2].Result != ResultFailed {
		t.Fatalf("the worker took %+v, want two retries and a failure", jobs)
	}
	if got := e.status(run); got != StatusFailed {
		t.Fatalf("run is %s, want failed", got)
	}
	if got := e.count(`SELECT count(*) FROM jobs WHERE state = 'failed' AND attempts = 3`); got != 1 {
		t.Errorf("%d failed jobs with 3 attempts, want 1", got)
	}
	if got := e.api.Effects(); got != 0 {
		t.Errorf("the provider performed %d effects for a run it refused, want 0", got)
	}
	if u := e.usage(); u.Used != 0 {
		t.Errorf("a failed run spent %d of the allowance, want 0", u.Used)
	}
	// The daily research unit the failed attempts reserved was given back each time.
	if got := e.count(`SELECT count(*) FROM once.counter_slots`); got != 0 {
		t.Errorf("the daily research counter is at %d after a failed run, want 0", got)
	}
	if next, _ := e.press(); next == 0 || next == run {
		t.Errorf("press after a failed run went to %d, want a new run", next)
	}
}

// A job killed for running too long fails its run immediately, without waiting for the
// stale rule or for more attempts.
func TestWorker_JobKilledForRunningTooLongFailsTheRun(t *testing.T) {
	t.Parallel()
	e := setup(t, fakeprovider.WithLatency(500*time.Millisecond))
	e.worker.JobTimeout = 50 * time.Millisecond
	run, _ := e.press()

	jobs := e.drain()
	if len(jobs) != 1 || jobs[0].Result != ResultFailed || !strings.Contains(jobs[0].Err.Error(), "killed after running longer than 50ms") {
		t.Fatalf("the worker took %+v, want one job killed and failed", jobs)
	}
	if got := e.status(run); got != StatusFailed {
		t.Fatalf("run is %s, want failed", got)
	}
	if u := e.usage(); u.Used != 0 {
		t.Errorf("a failed run spent %d of the allowance, want 0", u.Used)
	}
}

// The provider accepted the research and the answer was lost on the way back: the job is
// retried with the same provider key, and the provider answers from its records instead of
// researching (and billing) again.
func TestWorker_LostAnswerIsNotPaidTwice(t *testing.T) {
	t.Parallel()
	e := setup(t)
	run, _ := e.press()
	e.api.DropAfterAccept(1)

	jobs := e.drain()
	if len(jobs) != 2 || jobs[0].Result != ResultRetry || jobs[1].Result != ResultCompleted {
		t.Fatalf("the worker took %+v, want a retry, then completion", jobs)
	}
	if got := e.status(run); got != StatusCompleted {
		t.Fatalf("run is %s, want completed", got)
	}
	if got := e.api.EffectsAt("/v1/research"); got != 1 {
		t.Errorf("research performed %d times, want 1", got)
	}
	if got := e.api.Replays(); got != 1 {
		t.Errorf("%d answers replayed, want 1 (the retry of the lost one)", got)
	}
	if got := e.count(`SELECT count(*) FROM once.counter_slots`); got != 1 {
		t.Errorf("the daily research counter is at %d, want 1", got)
	}
}

// The daily guard under the monthly allowance: however often support resets the allowance,
// an organisation pays for at most DailyResearchCap research runs a day. The run past the cap
// fails before anything is spent, and does not count.
func TestWorker_DailyCapStopsResearchPastIt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var last int64
	for i := 1; i <= DailyResearchCap+1; i++ {
		if _, err := ResetAllowance(t.Context(), e.db, org); err != nil {
			t.Fatal(err)
		}
		last, _ = e.press()
		if last == 0 {
			t.Fatalf("press %d after a reset started nothing", i)
		}
		e.drain()
	}
	if got := e.count(`SELECT count(*) FROM runs WHERE status = 'completed'`); got != DailyResearchCap {
		t.Errorf("%d runs completed, want %d", got, DailyResearchCap)
	}
	if got := e.status(last); got != StatusFailed {
		t.Errorf("the run past the daily cap is %s, want failed", got)
	}
	if got := e.api.EffectsAt("/v1/research"); got != DailyResearchCap {
		t.Errorf("research paid %d times in a day, want %d", got, DailyResearchCap)
	}
	if u := e.usage(); u.Used != 0 {
		t.Errorf("after resets and a failed run, %d of the allowance is used, want 0", u.Used)
	}
}
