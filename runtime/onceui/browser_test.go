package onceui_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/crashtest"
	"github.com/oncekit/once/runtime/onceops"
	"github.com/oncekit/once/runtime/onceschema"
)

// envKilledDSN passes the test database to the child that is killed mid-effect.
const envKilledDSN = "ONCEUI_KILLED_DSN"

// killedStale is the stale window of the killed holder's guard: past it, the next call
// finds the claim of a dead holder and ends it uncertain.
const killedStale = time.Second

var killedGuard = once.Forever{Name: "payments.Capture", Stale: killedStale}

// chromium finds Debian's Chromium, or skips the test saying why (fails under CI=true).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium on PATH (chromium, chromium-browser): .ci/run installs the Debian package")
	}
	t.Skip("no Chromium on PATH (install Debian's chromium to run the browser tests)")
	return ""
}

// artifacts is the directory the screenshots go to: $ONCE_ARTIFACTS/onceui, or a temporary
// directory kept after the test.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ONCE_ARTIFACTS")
	if dir == "" {
		d, err := os.MkdirTemp("", "onceui-screenshots-")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
	}
	dir = filepath.Join(dir, "onceui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// startBrowser starts one headless Chromium for the test, with the flags that keep it off
// the network, on a new empty profile.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return bctx
}

// The console in a real browser against rows real guards made, among them the uncertain
// outcome of a holder killed mid-effect: every page renders (screenshots saved), and the
// operator takes every action by clicking, with a reason typed: resolves that operation as
// done and another as retry, closes an open claim, rearms a latch, refunds an allowance and
// resets another, force-releases a lease and revives a dead follow-up. After each, the
// database holds the change and its audit row (who, what, before, after, why), and the next
// guard call follows it: the resolved key replays the operator's result, the retried one
// runs again, the closed claim's key opens anew, the rearmed latch fires once, the refunded
// allowance admits exactly the units given back, the reset one its whole cap, the released
// lease goes to another holder with a higher fence, and the revived follow-up is pending
// and delivered once.
func TestBrowser_OperatorTakesEveryActionByClicking(t *testing.T) {
	if crashtest.IsChild(t) {
		conn, err := pgx.Connect(context.Background(), os.Getenv(envKilledDSN))
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		once.ForeverValue(context.Background(), conn, killedGuard, once.Ref{Scope: "acct-7", Key: "capture/991"},
			func(ctx context.Context) (string, error) {
				a, _ := once.AttemptFrom(ctx)
				crashtest.Ready(a.ID()) // the provider was asked; the answer never recorded
				return "", nil
			})
	}
	bctx := startBrowser(t)
	dir := artifacts(t)
	ctx := context.Background()

	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 4)
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	f := populate(t, pool)
	// A second allowance, partly used, for the reset.
	for range 2 {
		if _, err := (once.Statement{Name: f.allowance, Cap: 3}).Do(ctx, pool, "org-2", 1, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	child, err := crashtest.Start(t, map[string]string{envKilledDSN: db.URL})
	if err != nil {
		t.Fatal(err)
	}
	killedID := child.Payload
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(killedStale + 100*time.Millisecond)
	mustNotRun := func(context.Context) (string, error) {
		t.Error("the killed holder's function ran again")
		return "", nil
	}
	if _, _, err := once.ForeverValue(ctx, pool, killedGuard, once.Ref{Scope: "acct-7", Key: "capture/991"}, mustNotRun); !errors.Is(err, once.ErrUncertain) {
		t.Fatalf("after the holder was killed: %v, want ErrUncertain", err)
	}

	// Receipts sent once and asked for 41 more times: 41 duplicates answered, written now
	// rather than by the pool's timer.
	receipts := once.Forever{Name: "receipts.Send"}
	for range 42 {
		if _, err := receipts.Do(ctx, pool, once.Ref{Key: "r-1"}, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := once.FlushDuplicates(ctx, pool); err != nil {
		t.Fatal(err)
	}

	srv := console(t, pool, false)
	origin := srv.URL + base
	detail := origin + "/operation?name=" + url.QueryEscape(killedGuard.Name) + "&scope=acct-7&key=" + url.QueryEscape("capture/991")
	pages := []struct{ file, url, want string }{
		{"overview", origin + "/", "payments.Capture"},
		{"uncertain", origin + "/uncertain", "capture/991"},
		{"operation", detail, "Resolve as done"},
		{"operation-ledger", origin + "/operation?name=billing.Charge&scope=acct-1&key=inv-2", "usd_micros"},
		{"claims", origin + "/claims", "research.Run"},
		{"latches", origin + "/latches", "alerts.Down"},
		{"allowances", origin + "/allowances", "ai.Credits"},
		{"leases", origin + "/leases", "runs.Org"},
		{"followups", origin + "/followups", "smtp: 554 rejected"},
	}
	// One tab for every page: opening a tab per page costs more than the pages.
	// The tab is opened here, with no deadline: a tab opened by a run with a deadline closes
	// with it.
	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	if err := chromedp.Do(tab); err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		tctx, cancelT := context.WithTimeout(tab, 15*time.Second)
		var text string
		var png []byte
		err := chromedp.Do(tctx, chromedp.Navigate(p.url), chromedp.WaitVisible("main h1"))
		if err == nil {
			text, err = chromedp.Run(tctx, chromedp.Text("main"))
		}
		if err == nil {
			png, err = chromedp.Run(tctx, chromedp.FullScreenshot(100))
		}
		cancelT()
		if err != nil {
			t.Fatalf("%s: %v", p.file, err)
		}
		if !strings.Contains(text, p.want) {
			t.Fatalf("%s does not show %q:\n%s", p.file, p.want, text)
		}
		if p.file == "overview" {
			overviewAnswered(t, tab)
		}
		if strings.Contains(p.file, "uncertain") && !strings.Contains(text, scriptKey) {
			t.Fatalf("the uncertain page does not show the <script> key as text:\n%s", text)
		}
		if err := os.WriteFile(filepath.Join(dir, p.file+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Resolve the killed holder's operation as done, by clicking.
	tctx, cancel := context.WithTimeout(tab, 90*time.Second)
	defer cancel()
	done := `form[action$="/act/resolve-done"]`
	if err := chromedp.Do(tctx, chromedp.Navigate(detail), chromedp.WaitVisible(done),
		chromedp.SendKeys(done+` input[name="result"]`, `"ch_3PzA"`),
		chromedp.SendKeys(done+` input[name="reason"]`, "provider shows the capture succeeded"),
		chromedp.Click(done+` button`),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, pool, `SELECT state = 'done' FROM once.operations WHERE id = '`+killedID+`'`)
	var actor, reason, before, after string
	if err := pool.QueryRow(ctx, `SELECT actor, reason, before->>'state', after->>'state' FROM once.audit
WHERE action = 'resolve done' AND target = $1`, "operation "+killedID).Scan(&actor, &reason, &before, &after); err != nil {
		t.Fatalf("the resolution's audit row: %v", err)
	}
	if actor != "ana" || reason != "provider shows the capture succeeded" || before != "uncertain" || after != "done" {
		t.Fatalf("audit row: %s %q %s -> %s", actor, reason, before, after)
	}
	// The form's POST is answered with a redirect back to the operation's page, which now
	// shows the audit row.
	waitText(t, tctx, "provider shows the capture succeeded")
	v, out, err := once.ForeverValue(ctx, pool, killedGuard, once.Ref{Scope: "acct-7", Key: "capture/991"}, mustNotRun)
	if err != nil || out.Status != once.Duplicate || v != "ch_3PzA" {
		t.Fatalf("the resolved key: %q %+v %v, want the operator's result replayed", v, out, err)
	}

	// Rearm the latch, by clicking; the next two calls fire once.
	rearm := `form[action$="/act/rearm"]`
	if err := chromedp.Do(tctx, chromedp.Navigate(origin+"/latches"), chromedp.WaitVisible(rearm),
		chromedp.SendKeys(rearm+` input[name="reason"]`, "database back up"),
		chromedp.Click(rearm+` button`),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, pool, `SELECT fired_at IS NULL FROM once.latches WHERE name = 'alerts.Down' AND key = 'db-1'`)
	waitText(t, tctx, "No latch set.")
	waitFor(t, pool, `SELECT count(*) = 1 FROM once.audit WHERE action = 'rearm' AND actor = 'ana' AND reason = 'database back up'`)
	ep := once.Episode{Name: "alerts.Down"}
	fired := 0
	for range 2 {
		if _, err := ep.Do(ctx, pool, "db-1", func(context.Context) error { fired++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if fired != 1 {
		t.Fatalf("the rearmed latch fired %d times, want once", fired)
	}
	auditRow(t, pool, "rearm", "latch alerts.Down \"db-1\"", "database back up", "firings", "1", "fired_at", "<nil>")

	// Resolve the other uncertain operation as retry: the next call runs its function.
	retry := `form[action$="/act/resolve-retry"]`
	clickAction(t, tctx, origin+"/operation?name=billing.Charge&scope=acct-1&key="+url.QueryEscape(scriptKey), retry, "", "", "provider has no record of the charge")
	waitFor(t, pool, `SELECT state = 'released' FROM once.operations WHERE id = '`+f.uncertainID+`'`)
	auditRow(t, pool, "resolve retry", "operation "+f.uncertainID, "provider has no record of the charge", "state", "uncertain", "state", "released")
	ran := 0
	if _, out, err := once.ForeverValue(ctx, pool, once.Forever{Name: "billing.Charge"}, once.Ref{Scope: "acct-1", Key: scriptKey},
		func(context.Context) (int, error) { ran++; return 1, nil }); err != nil || ran != 1 || out.Status != once.Ran {
		t.Fatalf("the key resolved as retry: ran %d times, %+v %v; want it run once", ran, out, err)
	}

	// Close the open claim: the next claim of its key opens anew.
	closeForm := `form[action$="/act/close"]`
	clickAction(t, tctx, origin+"/claims", closeForm, "", "", "the worker's node was drained")
	waitText(t, tctx, "No open claim.")
	auditRow(t, pool, "close claim", fmt.Sprint("claim ", f.claimID), "the worker's node was drained", "state", "open", "state", "stale")
	c, out, err := once.Open{Name: "research.Run", Stale: time.Hour}.Claim(ctx, pool, "org-1")
	if err != nil || c == nil || c.ID == f.claimID {
		t.Fatalf("after the close, a claim of org-1: %+v %+v %v; want a new claim", c, out, err)
	}

	// Refund two of org-1's three units: exactly two more calls are admitted.
	refund := `form[action$="/act/refund"]:has(input[name="key"][value="org-1"])`
	clickAction(t, tctx, origin+"/allowances", refund, "n", "2", "the report was never delivered")
	waitFor(t, pool, `SELECT count(*) = 1 FROM once.counter_slots WHERE name = 'ai.Credits' AND key = 'org-1'`)
	auditRow(t, pool, "refund 2", "allowance ai.Credits \"org-1\"", "the report was never delivered", "used", "3", "used", "1")
	admitted(t, pool, "org-1", 2)

	// Reset org-2's allowance (two of three used): the whole cap is admitted.
	reset := `form[action$="/act/reset"]:has(input[name="key"][value="org-2"])`
	clickAction(t, tctx, origin+"/allowances", reset, "", "", "new billing period agreed with support")
	waitFor(t, pool, `SELECT count(*) = 0 FROM once.counter_slots WHERE name = 'ai.Credits' AND key = 'org-2'`)
	auditRow(t, pool, "reset", "allowance ai.Credits \"org-2\"", "new billing period agreed with support", "used", "2", "used", "0")
	admitted(t, pool, "org-2", 3)

	// Force-release the held lease: another holder takes it, with a higher fence.
	var fence int64
	if err := pool.QueryRow(ctx, `SELECT fence FROM once.leases WHERE name = $1 AND key = 'org-1'`, f.lease).Scan(&fence); err != nil {
		t.Fatal(err)
	}
	lease := once.Lease{Name: f.lease, TTL: time.Hour}
	if h, out, err := lease.Acquire(ctx, pool, "org-1"); err != nil || h != nil {
		t.Fatalf("the held lease was acquired by another holder before the release: %+v %+v %v", h, out, err)
	}
	release := `form[action$="/act/release"]`
	clickAction(t, tctx, origin+"/leases", release, "", "", "the holder's pod is gone")
	waitText(t, tctx, "No lease held.")
	auditRow(t, pool, "force release", "lease runs.Org \"org-1\"", "the holder's pod is gone", "released_by", "<nil>", "released_by", "operator")
	h, out, err := lease.Acquire(ctx, pool, "org-1")
	if err != nil || h == nil || h.Fence <= fence {
		t.Fatalf("after the release, another holder: %+v %+v %v; want the lease with a fence above %d", h, out, err, fence)
	}

	// Revive the dead follow-up: pending again, and a drain delivers it once.
	revive := `form[action$="/act/revive"]`
	clickAction(t, tctx, origin+"/followups", revive, "", "", "smtp relay fixed")
	waitText(t, tctx, "No dead follow-up.")
	waitFor(t, pool, fmt.Sprint(`SELECT state = 'pending' FROM once.followups WHERE id = `, f.followUpID))
	auditRow(t, pool, "revive", fmt.Sprint("follow-up ", f.followUpID), "smtp relay fixed", "state", "dead", "state", "pending")
	delivered := 0
	drain := onceops.Drain{MaxAttempts: 1, Deliver: map[string]func(context.Context, onceops.FollowUp) error{
		"email": func(context.Context, onceops.FollowUp) error { delivered++; return nil },
	}}
	for range 2 {
		if _, err := drain.Run(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	if delivered != 1 {
		t.Fatalf("the revived follow-up was delivered %d times, want once", delivered)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(origin+"/audit"), chromedp.WaitVisible("main h1")); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "audit.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// clickAction opens pageURL, types value into the form's input (when input is not "") and
// reason into its reason, and clicks its button, as an operator does.
func clickAction(t *testing.T, tctx context.Context, pageURL, form, input, value, reason string) {
	t.Helper()
	actions := []chromedp.Action[chromedp.Void]{chromedp.Navigate(pageURL), chromedp.WaitVisible(form)}
	if input != "" {
		actions = append(actions, chromedp.SendKeys(form+` input[name="`+input+`"]`, value))
	}
	actions = append(actions, chromedp.SendKeys(form+` input[name="reason"]`, reason), chromedp.Click(form+` button`))
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("clicking %s on %s: %v", form, pageURL, err)
	}
}

// auditRow checks the one audit row of action on target: by ana, for reason, with the
// target's fields before and after as want says (field, value, ...: the first pair is read
// from before, the second from after; "<nil>" is a JSON null).
func auditRow(t *testing.T, pool *pgxpool.Pool, action, target, reason string, want ...string) {
	t.Helper()
	var actor, why string
	var before, after map[string]any
	err := pool.QueryRow(context.Background(), `SELECT actor, reason, before, after FROM once.audit WHERE action = $1 AND target = $2`,
		action, target).Scan(&actor, &why, &before, &after)
	if err != nil {
		t.Fatalf("the audit row of %s on %s: %v", action, target, err)
	}
	if actor != "ana" || why != reason {
		t.Fatalf("the audit row of %s on %s: by %q for %q, want ana for %q", action, target, actor, why, reason)
	}
	for i, row := range []map[string]any{before, after} {
		if 2*i+1 >= len(want) {
			break
		}
		field, value := want[2*i], want[2*i+1]
		got, ok := row[field]
		if !ok || fmt.Sprint(got) != value {
			t.Fatalf("the audit row of %s on %s: %s %s = %v, want %s\n%v", action, target, []string{"before", "after"}[i], field, got, value, row)
		}
	}
}

// admitted checks that the ai.Credits allowance of key admits exactly n more units: n calls
// run, the next is refused.
func admitted(t *testing.T, pool *pgxpool.Pool, key string, n int) {
	t.Helper()
	g := once.Statement{Name: "ai.Credits", Cap: 3}
	for i := range n + 1 {
		ran := false
		out, err := g.Do(context.Background(), pool, key, 1, func(context.Context) error { ran = true; return nil })
		if i < n && (err != nil || !ran) {
			t.Fatalf("allowance %s: call %d of the %d given back: ran %v, %+v %v", key, i+1, n, ran, out, err)
		}
		if i == n && (ran || out.Status != once.Refused) {
			t.Fatalf("allowance %s: call %d ran %v (%+v %v), want it refused after %d", key, i+1, ran, out, err, n)
		}
	}
}

// waitFor polls query (one boolean) until it is true, for up to 10 seconds.
func waitFor(t *testing.T, pool *pgxpool.Pool, query string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		err := pool.QueryRow(context.Background(), query).Scan(&ok)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not so after 10 s: %s (%v)", query, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits, for up to 10 seconds, until the tab's main element shows text: the page a
// form's POST was redirected to has loaded.
func waitText(t *testing.T, tctx context.Context, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		shown, err := chromedp.Run(tctx, chromedp.Text("main"))
		if err == nil && strings.Contains(shown, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page does not show %q after 10 s (%v):\n%s", text, err, shown)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// overviewAnswered checks the overview shown in tab: receipts.Send's 41 duplicates in its
// row, and today's bar of the duplicates chart as tall as every guard's answers together
// (every call of the test was answered today).
func overviewAnswered(t *testing.T, tab context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
	const rows = [...document.querySelectorAll('tbody tr')];
	const receipts = rows.find(r => r.cells[1] && r.cells[1].textContent === 'receipts.Send');
	const total = rows.reduce((n, r) => n + Number((r.querySelector('td.answered') || {}).textContent || 0), 0);
	const bars = document.querySelectorAll('svg[aria-label="duplicates answered per day"] rect title');
	return [receipts ? receipts.querySelector('td.answered').textContent : '', String(total),
		bars.length ? bars[bars.length - 1].textContent : ''];
})()`))
	if err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format("2006-01-02")
	if got[0] != "41" || got[2] != today+": "+got[1] {
		t.Fatalf("overview: receipts.Send answered %q (want 41); all guards %s; today's bar %q (want %q)", got[0], got[1], got[2], today+": "+got[1])
	}
}
