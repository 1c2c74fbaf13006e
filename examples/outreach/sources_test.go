package outreach_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/outreach"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
)

// importCity queues an import and returns its job id.
func (e *env) importCity(url, city string) (code int, job int64) {
	e.t.Helper()
	code, body := e.do("POST", url, "/imports", map[string]string{"city": city})
	var r struct {
		Result struct{ Job int64 }
	}
	json.Unmarshal(body, &r)
	return code, r.Result.Job
}

// The same import queued by 40 requests at once: one job, and every answer names it. Once
// it has finished, the same city can be queued again, and is a new paid request.
func TestImport_OnceWhileOpenThenAgain(t *testing.T) {
	t.Parallel()
	e := setup(t)
	jobs := make([]int64, duplicates)
	codes := make([]int, duplicates)
	storm.Run(duplicates, func(i int) { codes[i], jobs[i] = e.importCity(e.url, "Lisbon") })
	if got := statuses(codes); got[http.StatusAccepted] != 1 || got[http.StatusOK] != duplicates-1 {
		t.Errorf("answers: %v, want one 202 and %d 200 naming the queued job", got, duplicates-1)
	}
	for i, j := range jobs {
		if j != jobs[0] || j == 0 {
			t.Fatalf("answer %d names job %d, answer 0 job %d", i, j, jobs[0])
		}
	}
	if n := e.count(`SELECT count(*) FROM jobs WHERE kind = 'import'`); n != 1 {
		t.Errorf("%d import jobs, want 1", n)
	}
	e.drain()
	if n := e.source.Effects(); n != 1 {
		t.Errorf("paid searches: %d, want 1", n)
	}

	code, again := e.importCity(e.url, "lisbon")
	if code != http.StatusAccepted || again == jobs[0] {
		t.Fatalf("queueing a finished import again: %d, job %d (first was %d)", code, again, jobs[0])
	}
	e.drain()
	if n := e.source.Effects(); n != 2 {
		t.Errorf("paid searches after the second import: %d, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM imports`); n != 2 {
		t.Errorf("%d imports recorded, want 2", n)
	}
}

// Sixty-four imports run by 64 workers at once against a budget of 50 requests a day:
// exactly 50 reach the paid source; the rest wait for tomorrow, and run then.
func TestSourceBudget_WorkerStormSpendsExactlyTheCap(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const n = 64
	for i := range n {
		if code, _ := e.importCity(e.url, fmt.Sprintf("city %d", i)); code != http.StatusAccepted {
			t.Fatalf("queueing import %d: %d", i, code)
		}
	}
	w := e.app.Worker()
	storm.Run(n, func(int) {
		if _, err := w.Drain(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if got := e.source.Effects(); got != outreach.PlacesDailyCap {
		t.Errorf("paid searches today: %d, want the cap, %d", got, outreach.PlacesDailyCap)
	}
	if used := e.count(`SELECT requests_used FROM provider_days WHERE provider = 'places'`); used != outreach.PlacesDailyCap {
		t.Errorf("requests_used %d, want %d", used, outreach.PlacesDailyCap)
	}
	if waiting := e.count(`SELECT count(*) FROM jobs WHERE status = 'pending' AND run_after > $1`, start); waiting != n-outreach.PlacesDailyCap {
		t.Errorf("%d imports wait for tomorrow, want %d", waiting, n-outreach.PlacesDailyCap)
	}

	e.clock.Add(24 * time.Hour)
	e.drain()
	if got := e.source.Effects(); got != n {
		t.Errorf("paid searches after tomorrow's run: %d, want %d", got, n)
	}
	if done := e.count(`SELECT count(*) FROM jobs WHERE status = 'done'`); done != n {
		t.Errorf("%d imports done, want %d", done, n)
	}
}

// The nine-day outage: the paid source runs out of credit and refuses every request for
// nine days, with imports every day. The operator hears once, not every day, and not zero
// times. When the source answers again the episode ends; when it fails again the same day,
// the operator hears again.
func TestBlockedSource_NineDayOutageAlertsOncePerEpisode(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.source.FailNext(1<<30, http.StatusPaymentRequired)

	for day := 1; day <= 9; day++ {
		// Day one: a storm of 32 workers on 32 refused imports.
		imports := 3
		if day == 1 {
			imports = 32
		}
		for i := range imports {
			e.importCity(e.url, fmt.Sprintf("day %d city %d", day, i))
		}
		w := e.app.Worker()
		storm.Run(imports, func(int) {
			if _, err := w.Drain(context.Background()); err != nil {
				t.Error(err)
			}
		})
		if got := emails(t, e.mail)["blocked"]; got != 1 {
			t.Fatalf("day %d: %d blocked alerts, want 1 for the whole outage", day, got)
		}
		e.clock.Add(24 * time.Hour)
	}
	if failed := e.count(`SELECT count(*) FROM jobs WHERE status = 'failed'`); failed != 32+8*3 {
		t.Errorf("%d imports failed, want %d: every one was refused", failed, 32+8*3)
	}

	// Day ten: credit is back; a search works and ends the episode. Then the source fails
	// again, the same day: a new outage, and a new alert.
	e.source.FailNext(0, 0)
	e.importCity(e.url, "recovery")
	e.drain()
	if got := emails(t, e.mail)["blocked"]; got != 1 {
		t.Fatalf("after the recovery: %d blocked alerts, want still 1", got)
	}
	e.source.FailNext(1<<30, http.StatusPaymentRequired)
	e.importCity(e.url, "second outage")
	e.importCity(e.url, "second outage, again")
	e.drain()
	if got := emails(t, e.mail)["blocked"]; got != 2 {
		t.Errorf("after a second outage the same day: %d blocked alerts, want 2", got)
	}
}

// The healthy set saves round trips, and only that: forty searches that work one after
// another in one process send one rearm statement. Across two processes the latch still decides, and a
// process's stale memory delays a rearm by at most HealthHint.
func TestHealthHint_SavesRoundTripsNotTheGuarantee(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i := range duplicates {
		e.importCity(e.url, fmt.Sprintf("city %d", i))
	}
	e.drain()
	if n := e.source.Effects(); n != duplicates {
		t.Fatalf("%d searches, want %d", n, duplicates)
	}
	if n := e.app.Stats.Rearms.Load(); n != 1 {
		t.Errorf("%d rearm statements for %d searches that worked one after another, want 1", n, duplicates)
	}

	// Instance B sees the source fail, and alerts. Instance A, whose memory says the source
	// is fine, sees a search work within its hint, and skips the rearm: a failure right after,
	// seen by B, is taken as the same outage.
	b, bURL := e.instance()
	block := func(url string, app *outreach.App) {
		e.source.FailNext(1, http.StatusPaymentRequired)
		e.importCity(url, "blocked "+url+e.clock.Now().String())
		if _, err := app.Worker().Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	work := func(url string, app *outreach.App) {
		e.importCity(url, "works "+url+e.clock.Now().String())
		if _, err := app.Worker().Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	block(bURL, b)
	if got := emails(t, e.mail)["blocked"]; got != 1 {
		t.Fatalf("blocked alerts: %d, want 1", got)
	}
	e.clock.Add(10 * time.Second)
	work(e.url, e.app)
	block(bURL, b)
	if got := emails(t, e.mail)["blocked"]; got != 1 {
		t.Fatalf("blocked alerts within A's hint: %d, want still 1", got)
	}
	// Past the hint, A asks the database again: the rearm happens, and the next failure is
	// news.
	e.clock.Add(2 * time.Minute)
	work(e.url, e.app)
	block(bURL, b)
	if got := emails(t, e.mail)["blocked"]; got != 2 {
		t.Errorf("blocked alerts after A's hint expired: %d, want 2", got)
	}
}

// A worker dies while running an import: the job stays "running" and its key stays open.
// The next drain after StaleAfter queues it again, and the retry sends the same key, so the
// paid source counts one search.
func TestWorker_DeadWorkersJobIsRequeuedAndRepeatsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, job := e.importCity(e.url, "Porto")
	// The dead worker got as far as the paid search, with the key its job gives it.
	ctx := context.Background()
	if _, err := e.db.Exec(ctx, `UPDATE jobs SET status = 'running', attempts = 1, updated_at = now() - interval '1 hour' WHERE id = $1`, job); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.app.SearchPlacesOnce(ctx, job, "porto"); err != nil {
		t.Fatal(err)
	}
	if code, again := e.importCity(e.url, "Porto"); code != http.StatusOK || again != job {
		t.Fatalf("queueing Porto while its job is running: %d, job %d, want 200 and job %d", code, again, job)
	}
	e.drain()
	if st := e.count(`SELECT count(*) FROM jobs WHERE id = $1 AND status = 'done' AND attempts = 2`, job); st != 1 {
		t.Errorf("the dead worker's job was not run again to the end")
	}
	if n := e.source.Effects(); n != 1 {
		t.Errorf("paid searches: %d, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM imports`); n != 1 {
		t.Errorf("%d imports recorded, want 1", n)
	}
}

// The daily budget is spent on a UTC day, whatever zone the app's clock reports in: a job
// refused in the evening west of Greenwich waits for the next UTC midnight. (Tomorrow taken
// from the local date would be a midnight already past, and the worker would take the job
// again at once, for ever.)
func TestSourceBudget_SpentBudgetWaitsForTheNextUTCDay(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// 23:00 on Sunday in Honolulu is 09:00 on Monday in UTC: the budget's day is Monday.
	e.clock = fixture.NewClock(start.In(time.FixedZone("HST", -10*60*60)))
	e.app, e.url = e.instance()
	if _, err := e.db.Exec(context.Background(), `INSERT INTO provider_days (provider, day, requests_used) VALUES ($1, $2, $3)`,
		outreach.SourcePlaces, string(outreach.DayOf(start)), outreach.PlacesDailyCap); err != nil {
		t.Fatal(err)
	}
	_, job := e.importCity(e.url, "Hilo")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ran, err := e.app.Worker().Drain(ctx)
	if err != nil || ran != 1 {
		t.Fatalf("drain: ran %d jobs (%v), want the one import, deferred", ran, err)
	}
	var runAfter time.Time
	if err := e.db.QueryRow(ctx, `SELECT run_after FROM jobs WHERE id = $1 AND status = 'pending'`, job).Scan(&runAfter); err != nil {
		t.Fatalf("the deferred import: %v", err)
	}
	if want := time.Date(2025, 3, 4, 0, 0, 0, 0, time.UTC); !runAfter.Equal(want) {
		t.Errorf("the import waits until %s, want the next UTC midnight %s", runAfter.UTC(), want)
	}
	if n := e.source.Effects(); n != 0 {
		t.Errorf("paid searches past the budget: %d, want 0", n)
	}
}
