// Package squawk runs squawk, the PostgreSQL migration linter, over migration files in
// tests: it is the reviewer every file oncegen writes must satisfy.
//
// The binary comes from PATH, or from the npm package squawk-cli (pinned to Version),
// installed by Path into the user's cache directory when missing, as the test harness
// starts PostgreSQL itself. Without squawk and without npm, a test skips and says why,
// except under CI=true, where it fails.
package squawk

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Version is the squawk-cli release the tests install when squawk is not on PATH.
const Version = "2.66.0"

var (
	once    sync.Once
	binPath string
	binErr  error
)

// Path returns the squawk binary, installing squawk-cli with npm when it is not on PATH.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(func() { binPath, binErr = find() })
	if binErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("squawk: %v", binErr)
		}
		t.Skipf("squawk: %v", binErr)
	}
	return binPath
}

func find() (string, error) {
	if p, err := exec.LookPath("squawk"); err == nil {
		return p, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no squawk on PATH, and no cache directory to install it in: %w", err)
	}
	dir := filepath.Join(cache, "oncekit-squawk", Version)
	bin := filepath.Join(dir, "node_modules", ".bin", "squawk")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", errors.New("no squawk on PATH, and no npm to install squawk-cli with")
	}
	// Installed beside the final place, then moved there, so concurrent test binaries never
	// see half an installation.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", tmp, "squawk-cli@"+Version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install squawk-cli@%s: %v\n%s", Version, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(bin); statErr != nil {
			return "", fmt.Errorf("installing squawk: %w", err)
		}
	}
	return bin, nil
}

// Finding is one of squawk's reports.
type Finding struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Rule    string `json:"rule_name"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", filepath.Base(f.File), f.Line+1, f.Rule, f.Message)
}

// InTransaction says whether a migration tool runs a file inside a transaction it opens
// itself (goose, golang-migrate, Atlas do, for a file without their no-transaction mark):
// squawk then judges the file's statements as run in one, as PostgreSQL runs them.
type InTransaction bool

// Check runs squawk under its default rules on files and returns what it finds.
func Check(t testing.TB, inTx InTransaction, files ...string) []Finding {
	t.Helper()
	if len(files) == 0 {
		return nil
	}
	args := []string{"--reporter", "json"}
	if inTx {
		args = append(args, "--assume-in-transaction")
	}
	cmd := exec.Command(Path(t), append(args, files...)...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("squawk: %v", err)
	}
	var found []Finding
	if err := json.Unmarshal(out, &found); err != nil {
		t.Fatalf("squawk's report: %v\n%s", err, out)
	}
	if len(found) == 0 && err != nil {
		t.Fatalf("squawk failed and reported nothing: %v\n%s", err, ee.Stderr)
	}
	return found
}

// Transactional reports whether a migration file oncegen wrote runs in a transaction: every
// one does but a CONCURRENTLY file, which says so in its header.
func Transactional(content string) bool {
	return !strings.Contains(content, "CONCURRENTLY cannot run inside a transaction")
}
