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

// run runs a command in testdata/dir and returns its combined output and exit code.
func run(t *testing.T, dir string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = filepath.Join("testdata", dir)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
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

const (
	// The module's mail service, mailer, is called from notify and from server: each
	// caller decides what it sends, so each is reported at its call, with the service's
	// declaration two packages down from the handler as the related place.
	shared   = "notify/notify.go:8:9: call to (*mailer.Mailer).Send reaches smtp.SendMail with no //once: promise"
	direct   = "server/main.go:21:12: call to (*mailer.Mailer).Send reaches smtp.SendMail with no //once: promise"
	extended = "reminders/reminders.go:11:9: call to (*smsapi.Client).Send has no idempotency key and no //once: promise"
)

// declared is the related place; go vet's per-package processes know it from export
// data, which keeps its line but not its column.
var declared = regexp.MustCompile(`mailer/mailer\.go:10:\d+: \t\(\*mailer\.Mailer\)\.Send is declared here`)

// notReported are places a finding must not be: the service itself (its callers are
// judged) and the handler's call of notify.Shipped (notify already reports the effect).
var notReported = []string{"mailer/mailer.go:11:", "server/main.go:15:"}

// checkApp checks the findings on testdata/app, as both drivers print them.
func checkApp(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{shared, direct, extended} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := len(declared.FindAllString(out, -1)); n != 2 {
		t.Errorf("output names the service's declaration %d times, want 2 (one per caller):\n%s", n, out)
	}
	for _, bad := range notReported {
		if strings.Contains(out, bad) {
			t.Errorf("output reports at %s:\n%s", bad, out)
		}
	}
}

// The handler in package main reaches net/smtp through notify and mailer: the effect
// travels up as a fact and is reported at the calls of the shared service, on its own
// and under vet.
func TestStandalone_EffectTwoPackagesDown(t *testing.T) {
	t.Parallel()
	out, code := run(t, "app", oncelint, "-catalog=oncelint.json", "./...")
	if code != 3 {
		t.Errorf("exit code %d, want 3 (findings)\n%s", code, out)
	}
	checkApp(t, out)
}

func TestVet_EffectTwoPackagesDown(t *testing.T) {
	t.Parallel()
	out, code := run(t, "app", "go", "vet", "-vettool="+oncelint, "-catalog=oncelint.json", "./...")
	if code != 1 {
		t.Errorf("exit code %d, want 1 (findings)\n%s", code, out)
	}
	checkApp(t, out)
}

// Without -catalog, the gateway of the application's own catalogue is not an effect.
func TestCatalogFlag_AddsEntriesFromTheModuleRoot(t *testing.T) {
	t.Parallel()
	out, _ := run(t, "app", oncelint, "./...")
	if strings.Contains(out, "smsapi") || !strings.Contains(out, shared) || !strings.Contains(out, direct) {
		t.Errorf("without -catalog: want only the built-in finding, got\n%s", out)
	}
	// From a package directory, as go vet runs it, the name still resolves from the root.
	out, _ = run(t, "app/server", "go", "vet", "-vettool="+oncelint, "-catalog=oncelint.json", "../reminders")
	if !strings.Contains(out, "call to (*smsapi.Client).Send") {
		t.Errorf("-catalog from a package directory did not resolve from the module root:\n%s", out)
	}
}

// -json works in both drivers and carries the code as the category.
func TestJSON_BothDrivers(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"standalone": {oncelint, "-json", "./..."},
		"vet":        {"go", "vet", "-vettool=" + oncelint, "-json", "./..."},
	} {
		out, _ := run(t, "app", args[0], args[1:]...)
		found := false
		// go vet prints one JSON object per package, oncelint one for all.
		dec := json.NewDecoder(strings.NewReader(out[strings.Index(out, "{"):]))
		for dec.More() {
			var tree map[string]map[string][]struct {
				Category, Posn, Message string
				Related                 []struct{ Posn string }
			}
			if err := dec.Decode(&tree); err != nil {
				t.Fatalf("%s: output is not JSON: %v\n%s", name, err, out)
			}
			for _, d := range tree["example.com/app/notify"]["once001"] {
				found = found || (d.Category == "ONCE001" && strings.HasSuffix(d.Posn, "notify/notify.go:8:9") &&
					len(d.Related) == 1 && strings.Contains(d.Related[0].Posn, "mailer/mailer.go:10:"))
			}
		}
		if !found {
			t.Errorf("%s -json: no ONCE001 finding for notify/notify.go:8:9 with the service as related place:\n%s", name, out)
		}
	}
}

// A package that does not compile is reported as such, not as a crash; its malformed
// directive is still reported on its own.
func TestBrokenPackage_DoesNotCrash(t *testing.T) {
	t.Parallel()
	out, code := run(t, "broken", oncelint, "./...")
	if code != 1 || strings.Contains(out, "panic") || !strings.Contains(out, "undefined: undefinedBody") {
		t.Errorf("standalone: exit %d, want 1 with the type error and no panic:\n%s", code, out)
	}
	if !strings.Contains(out, `broken.go:8:8: unknown kind "forevr"`) {
		t.Errorf("standalone: malformed directive not reported:\n%s", out)
	}
	out, code = run(t, "broken", "go", "vet", "-vettool="+oncelint, "./...")
	if code == 0 || strings.Contains(out, "panic") || !strings.Contains(out, "undefined: undefinedBody") {
		t.Errorf("vet: exit %d, want a failure with the type error and no panic:\n%s", code, out)
	}
}
