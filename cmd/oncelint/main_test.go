package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var oncelint string // the built command

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "oncelint-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	oncelint = filepath.Join(dir, "oncelint")
	build := exec.Command("go", "build", "-o", oncelint, ".")
	build.Stderr = os.Stderr
	code := 1
	if err := build.Run(); err == nil {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs a command in testdata/dir (or dir, when absolute) and returns its combined
// output and exit code.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if !filepath.IsAbs(dir) {
		cmd.Dir = filepath.Join("testdata", dir)
	}
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	}
	t.Fatalf("%s %v: %v", name, args, err)
	return "", -1
}

// copyTestdata copies testdata/app and its sibling module testdata/gateway into a
// directory of the test's own, and returns the copy of app.
func copyTestdata(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{"app", "gateway"} {
		err := os.CopyFS(filepath.Join(tmp, d), os.DirFS(filepath.Join("testdata", d)))
		if err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(tmp, "app")
}

func count(out, s string) int { return strings.Count(out, s) }

// The effect two packages down (smtp.SendMail in mailer.Send, whose content notify.Shipped
// and the handlers give) is reported at each handler's call, the place that decides what
// is sent, with the place it is made as the related one; so is the call of the
// repository's own gateway module, which the project's catalogue (oncelint.json)
// classifies.
const (
	mailFinding    = "server/main.go:19:12: call of notify.Shipped sends the email with no //once: promise, on a path that runs it again: a repeat sends the email again; declare a promise on main.shipped (ONCE001)"
	mailFinding2   = "server/main.go:25:12: call of (*mailer.Mailer).Send sends the email with no //once: promise"
	gatewayFinding = "server/main.go:28:2: call of (*gateway.Client).Publish publishes the message with no //once: promise"
)

var handlerRelated = regexp.MustCompile(`(server/main\.go:(18|24):\d+: \truns it again: an HTTP handler|mailer/mailer\.go:11:9: \tthe effect is made here)`)

func TestStandalone_EffectReachedFromHandlersIsReportedOnceWhereItIsMade(t *testing.T) {
	t.Parallel()
	out, code := run(t, "app", nil, oncelint, "./...")
	if code != 3 {
		t.Errorf("exit code %d, want 3 (findings)\n%s", code, out)
	}
	if count(out, mailFinding) != 1 || count(out, mailFinding2) != 1 || count(out, gatewayFinding) != 1 {
		t.Errorf("want the mail and gateway findings once each:\n%s", out)
	}
	if n := len(handlerRelated.FindAllString(out, -1)); n != 5 {
		t.Errorf("the findings name %d related places, want each handler and, for both mail findings, the SMTP call:\n%s", n, out)
	}
	// The reminders are sent once by a plain call: no repeat path, no finding by default.
	if strings.Contains(out, "reminders/") {
		t.Errorf("reminders reported without -strict:\n%s", out)
	}
}

func TestVet_SameFindings(t *testing.T) {
	t.Parallel()
	out, code := run(t, "app", nil, "go", "vet", "-vettool="+oncelint, "./...")
	if code != 1 {
		t.Errorf("exit code %d, want 1 (findings)\n%s", code, out)
	}
	if !strings.Contains(out, mailFinding) || !strings.Contains(out, mailFinding2) || !strings.Contains(out, gatewayFinding) {
		t.Errorf("go vet lacks the findings:\n%s", out)
	}
	if strings.Contains(out, "oncelint-coverage") || strings.Contains(out, "effects seen") {
		t.Errorf("go vet prints coverage; the vet form prints findings only:\n%s", out)
	}
}

// Without the project's catalogue line, the gateway's send is not a finding: the summary
// lists it as a send no catalogue entry classifies, with the line to add.
func TestProjectCatalogue_ClassifiesAWrapperInAnotherModule(t *testing.T) {
	t.Parallel()
	app := copyTestdata(t)
	if err := os.WriteFile(filepath.Join(app, "oncelint.json"), []byte(`{"effects": [{"func": "(*example.com/app/smsapi.Client).Send", "effect": "sends the text message", "class": "message", "key": {"arg": 1, "field": "RequestID"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := run(t, app, nil, oncelint, "./...")
	if strings.Contains(out, "(*gateway.Client).Publish publishes") {
		t.Errorf("the gateway is an effect without its catalogue line:\n%s", out)
	}
	if !strings.Contains(out, `1 through (*example.com/gateway.Client).Publish: {"func": "(*example.com/gateway.Client).Publish", "effect": "...", "class": "..."}`) {
		t.Errorf("the summary does not name the unclassified send and its line:\n%s", out)
	}
}

// Every run ends with what it saw, also when it saw nothing.
func TestSummary_SaysWhatItSaw(t *testing.T) {
	t.Parallel()
	out, code := run(t, "quiet", nil, oncelint, "./...")
	if code != 0 || !strings.Contains(out, "oncelint: 0 effects seen in 1 packages (0 analysed for effects); 0 findings") {
		t.Errorf("exit %d; want the summary of a package with no effect:\n%s", code, out)
	}
	out, _ = run(t, "app", nil, oncelint, "./...")
	if !strings.Contains(out, "oncelint: 7 effects seen in 5 packages") || !strings.Contains(out, "email 4") {
		t.Errorf("want the app's summary:\n%s", out)
	}
}

// -strict reports the reminder sent with no key, repeat path or not; the keyed one is
// covered by its key.
func TestStrict_ReportsEveryEffectNoPromiseCovers(t *testing.T) {
	t.Parallel()
	out, _ := run(t, "app", nil, oncelint, "-strict", "./...")
	if !strings.Contains(out, "reminders/reminders.go:11:9: call of (*smsapi.Client).Send sends the text message with no //once: promise and no idempotency key (-strict)") {
		t.Errorf("-strict does not report the unkeyed reminder:\n%s", out)
	}
	if strings.Contains(out, "reminders/reminders.go:15:") {
		t.Errorf("-strict reports the keyed reminder:\n%s", out)
	}
}

// -json holds the findings, by package and check, and the summary; go vet's own -json
// holds the findings.
func TestJSON_BothDrivers(t *testing.T) {
	t.Parallel()
	out, _ := run(t, "app", nil, oncelint, "-json", "./...")
	var got struct {
		Diagnostics map[string]map[string][]struct{ Category, Posn, Message string }
		Summary     struct {
			Packages, Effects, Findings int
			Unclassified                []struct{ Func string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	found := false
	for _, d := range got.Diagnostics["example.com/app/server"]["once001"] {
		found = found || d.Category == "ONCE001" && strings.HasSuffix(d.Posn, "server/main.go:19:12")
	}
	if !found || got.Summary.Packages != 5 || got.Summary.Findings != 3 {
		t.Errorf("-json: finding %v, summary %+v:\n%s", found, got.Summary, out)
	}
	out, _ = run(t, "app", nil, "go", "vet", "-vettool="+oncelint, "-json", "./...")
	if !strings.Contains(out, `"posn": "`) || !strings.Contains(out, "server/main.go:19:12") {
		t.Errorf("go vet -json lacks the finding:\n%s", out)
	}
}

// A baseline records today's findings; a later run reports only new ones, and a finding
// whose lines moved is still the recorded one.
func TestBaseline_RoundTrip(t *testing.T) {
	t.Parallel()
	app := copyTestdata(t)
	out, code := run(t, app, nil, oncelint, "-baseline=oncelint.baseline", "-write-baseline", "./...")
	if code != 0 || !strings.Contains(out, "3 findings recorded in oncelint.baseline") {
		t.Fatalf("writing the baseline: exit %d\n%s", code, out)
	}
	server := filepath.Join(app, "server", "main.go")
	src, err := os.ReadFile(server)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(src), "package main\n", "package main\n\n// Lines inserted above the findings.\n\n", 1)
	if err := os.WriteFile(server, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = run(t, app, nil, oncelint, "-baseline=oncelint.baseline", "./...")
	if code != 0 || strings.Contains(out, "(ONCE001)") || !strings.Contains(out, "(3 more in the baseline)") {
		t.Errorf("with the baseline, after lines moved: exit %d, want 0 and no finding:\n%s", code, out)
	}
	src, err = os.ReadFile(server)
	if err != nil {
		t.Fatal(err)
	}
	added := strings.Replace(string(src), "func main() {", "func cancelled(w http.ResponseWriter, r *http.Request) {\n\tgw.Publish(\"cancelled\", r.FormValue(\"order\"))\n}\n\nfunc main() {", 1)
	if err := os.WriteFile(server, []byte(added), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = run(t, app, nil, oncelint, "-baseline=oncelint.baseline", "./...")
	if code != 3 || count(out, "(ONCE001)") != 1 || !strings.Contains(out, "server/main.go:35:2: call of (*gateway.Client).Publish") {
		t.Errorf("with the baseline and a new effect: exit %d, want 3 and the new finding alone:\n%s", code, out)
	}
}

// The go command's build flags apply: GOFLAGS=-modfile=... as go vet reads it, and
// -modfile given to oncelint.
func TestBuildFlags_Modfile(t *testing.T) {
	t.Parallel()
	app := copyTestdata(t)
	// go.mod lacks the gateway module; only go.alt.mod builds the app.
	if err := os.Rename(filepath.Join(app, "go.mod"), filepath.Join(app, "go.alt.mod")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "go.mod"), []byte("module example.com/app\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, app, nil, oncelint, "./..."); code != 1 {
		t.Fatalf("without -modfile the app must not build: exit %d\n%s", code, out)
	}
	out, code := run(t, app, []string{"GOFLAGS=-modfile=go.alt.mod"}, oncelint, "./...")
	if code != 3 || !strings.Contains(out, mailFinding) {
		t.Errorf("GOFLAGS=-modfile: exit %d\n%s", code, out)
	}
	out, code = run(t, app, nil, oncelint, "-modfile=go.alt.mod", "./...")
	if code != 3 || !strings.Contains(out, mailFinding) {
		t.Errorf("-modfile: exit %d\n%s", code, out)
	}
}

// A package that does not compile is reported as such, not as a crash.
func TestBrokenPackage_DoesNotCrash(t *testing.T) {
	t.Parallel()
	out, code := run(t, "broken", nil, oncelint, ".")
	if code != 1 || strings.Contains(out, "panic") || !strings.Contains(out, "undefined: undefinedBody") {
		t.Errorf("standalone: exit %d, want 1 with the type error and no panic:\n%s", code, out)
	}
	out, code = run(t, "broken", nil, "go", "vet", "-vettool="+oncelint, ".")
	if code == 0 || strings.Contains(out, "panic") || !strings.Contains(out, "undefined: undefinedBody") {
		t.Errorf("vet: exit %d, want a failure with the type error and no panic:\n%s", code, out)
	}
}

// A malformed directive is reported in oncegen's words, followed by its code, on its own
// and under go vet.
func TestMalformedDirective_CarriesItsCode(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{oncelint, "./malformed"}, {"go", "vet", "-vettool=" + oncelint, "./malformed"}} {
		out, _ := run(t, "broken", nil, args[0], args[1:]...)
		if !strings.Contains(out, `malformed.go:6:8: unknown kind "forevr" (did you mean forever?) (ONCE000)`) &&
			!regexp.MustCompile(`malformed\.go:6:8: unknown kind "forevr".*\(ONCE000\)`).MatchString(out) {
			t.Errorf("%s: the malformed directive lacks its code:\n%s", args[0], out)
		}
	}
}

// A vendored dependency is a dependency: its effect is reported at the module's call of it,
// with the place it is made as the related one, never inside vendor/. A vendored logger
// whose writers beside the mailing one perform no effect mails only if configured to, so
// its call is no effect; a notifier whose every channel mails (one through a wrapper that
// sends again) is one.
func TestVendored_DependencyEffectAtTheCall(t *testing.T) {
	t.Parallel()
	out, code := run(t, "vendored", nil, oncelint, "./...")
	if code != 3 {
		t.Errorf("exit code %d, want 3 (findings)\n%s", code, out)
	}
	for _, want := range []string{
		"server/main.go:14:2: call of mail.Notify sends the email with no //once: promise",
		"server/main.go:18:2: call of notify.Shop sends the email with no //once: promise", // through a second vendored package
		"server/main.go:23:2: call of fanout.All sends the email with no //once: promise",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "logs.Error") || count(out, "(ONCE001)") != 3 {
		t.Errorf("want no finding for the configured logger, and three in all:\n%s", out)
	}
	if count(out, "vendor/example.com/mail/mail.go:8:9: \tthe effect is made here") != 2 || regexp.MustCompile(`vendor/\S+: call of`).MatchString(out) {
		t.Errorf("want no finding inside vendor/, each naming where the effect is made:\n%s", out)
	}
}

// A POST no catalogue entry classifies is a finding only where the module's own code
// retries it: a hook registered from a package the relay does not import, fired in the
// relay's loop of attempts (joined by the standalone run), and the module's own client that
// posts again after an error. The same hook fired once per HTTP request, a vendored client
// that retries by itself (its knowledge of the API it was written for), and a vendored
// batcher posting from a goroutine of its own are listed in the coverage, not reported.
func TestRetriedRequests_AreFindingsWhereTheModuleRetries(t *testing.T) {
	t.Parallel()
	const own = "server/main.go:19:6: call of httpx.Post sends a POST request with no //once: promise, on a path that runs it again"
	out, code := run(t, "hooks", nil, oncelint, "./...")
	for _, want := range []string{
		"relay/relay.go:24:14: call of (relay.Hook).Fire sends a POST request with no //once: promise, on a path that runs it again: a repeat sends a POST request again; declare a promise on relay.Retry, or on the call: an implementation in a package it does not import performs effects, or send an idempotency key the receiver honours",
		"relay/relay.go:24:14: \truns it again: the retry loop of relay.Retry",
		"webhook/webhook.go:24:15: \tan implementation's effect",
		own,
		"server/main.go:19:16: \truns it again: the retrying client httpx.Post",
		"1 through (*example.com/courier.Client).Post, sent again on failure",
		"1 through example.com/courier.Start, sent again on failure",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q:\n%s", want, out)
		}
	}
	if code != 3 || count(out, "(ONCE001)") != 2 {
		t.Errorf("exit code %d; want the two retried requests reported, and nothing else:\n%s", code, out)
	}
	out, code = run(t, "hooks", nil, "go", "vet", "-vettool="+oncelint, "./...")
	if code == 0 || !strings.Contains(out, own) || strings.Contains(out, "relay.go") || count(out, "(ONCE001)") != 1 {
		t.Errorf("go vet: exit code %d; want the module's own retrying client and no joined finding:\n%s", code, out)
	}
}

// A sink registered from a package the dispatcher does not import is reached through the
// dispatcher's interface: the standalone run joins the interface call on a retry path with
// that implementation's email. The sink that only records is not counted; the call with
// no repeat path, the ignored call and the call under a promise give no finding. go vet
// alone sees no implementation from the dispatcher and reports nothing there.
func TestStandalone_JoinsInterfaceCallsWithImplementationsNotImported(t *testing.T) {
	t.Parallel()
	const joined = "notify/notify.go:27:12: call of (notify.Sink).Deliver sends the email with no //once: promise, on a path that runs it again: a repeat sends the email again; declare a promise on notify.deliver, or on the call: an implementation in a package it does not import performs effects (ONCE001)"
	out, code := run(t, "plugins", nil, oncelint, "./...")
	if code != 3 || count(out, joined) != 1 || count(out, "(ONCE001)") != 1 {
		t.Errorf("exit code %d; want the retried interface call reported once, and nothing else:\n%s", code, out)
	}
	for _, rel := range []string{"pager/pager.go:18:9: \tan implementation's effect", "notify/notify.go:27:12: \truns it again: the retry loop of notify.deliver"} {
		if !strings.Contains(out, rel) {
			t.Errorf("the finding lacks %q:\n%s", rel, out)
		}
	}
	out, code = run(t, "plugins", nil, "go", "vet", "-vettool="+oncelint, "./...")
	if code != 0 || strings.Contains(out, "ONCE001") {
		t.Errorf("go vet: exit code %d; want no finding and the ignore in use:\n%s", code, out)
	}
}
