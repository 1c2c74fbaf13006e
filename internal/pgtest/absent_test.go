package pgtest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// envAbsentChild makes a re-executed test binary play a machine without PostgreSQL.
const envAbsentChild = "ONCE_PGTEST_ABSENT_CHILD"

// Without PostgreSQL a test that needs it is skipped, saying why; under CI=true it fails,
// since in CI a missing database is a broken build. The test runs itself again as a child
// process in which the server is absent, once with CI unset and once with CI=true.
func TestNewDatabase_WithoutAServerSkipsOrFailsUnderCI(t *testing.T) {
	const why = "no initdb and postgres found (as the parent arranged)"
	if os.Getenv(envAbsentChild) != "" {
		mu.Lock()
		started, absent = true, errors.New(why)
		mu.Unlock()
		NewDatabase(t)
		t.Fatal("NewDatabase returned without a server")
	}
	t.Parallel()
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), envAbsentChild+"=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		text := string(out)
		if !strings.Contains(text, why) {
			t.Errorf("CI=%q: the output does not say why:\n%s", ci, text)
		}
		switch {
		case ci == "" && (err != nil || !strings.Contains(text, "--- SKIP: "+t.Name()+" ")):
			t.Errorf("CI unset: %v, want the test skipped:\n%s", err, text)
		case ci == "true" && (err == nil || !strings.Contains(text, "--- FAIL: "+t.Name()+" ")):
			t.Errorf("CI=true: %v, want the test failed:\n%s", err, text)
		}
	}
}
