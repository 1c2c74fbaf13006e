package onceui_test

import (
	"context"
	"errors"
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
// outcome of a holder killed mid-effect: every page renders (screenshots saved); the
// operator resolves that operation as done and rearms the latch by clicking; the database
// and the audit show it, and the next guard calls follow: the resolved key replays the
// operator's result, the rearmed latch fires once.
func TestBrowser_OperatorResolvesAndRearms(t *testing.T) {
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
	populate(t, pool)
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
	for _, p := range pages {
		tab, cancel := chromedp.NewContext(bctx)
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
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", p.file, err)
		}
		if !strings.Contains(text, p.want) {
			t.Fatalf("%s does not show %q:\n%s", p.file, p.want, text)
		}
		if strings.Contains(p.file, "uncertain") && !strings.Contains(text, scriptKey) {
			t.Fatalf("the uncertain page does not show the <script> key as text:\n%s", text)
		}
		if err := os.WriteFile(filepath.Join(dir, p.file+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Resolve the killed holder's operation as done, by clicking.
	tctx, cancel := context.WithTimeout(bctx, 20*time.Second)
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
