package plugin_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// golangciVersion is the golangci-lint whose custom command builds the plugin.
const golangciVersion = "v2.15.0"

// The .custom-gcl.yml of the test: the plugin from this checkout (path:), as a team
// working on the plugin, or vendoring it, would write it.
const customGCL = `version: %s
name: custom-gcl
destination: %s
plugins:
  - module: github.com/oncekit/once
    import: github.com/oncekit/once/plugin
    path: %s
`

// The .golangci.yml of the test: oncelint alone, every finding shown.
const golangciYML = `version: "2"
run:
  relative-path-mode: wd
linters:
  default: none
  enable:
    - oncelint
  settings:
    custom:
      oncelint:
        type: module
        description: effects without a promise, unstable keys, process-local guards
issues:
  max-issues-per-linter: 0
  max-same-issues: 0
`

var naiveTwins = []string{"./examples/ideas/naive", "./examples/reports/naive", "./examples/outreach/naive", "./examples/paidactions/naive"}

// golangci-lint custom builds a golangci-lint with the plugin from this checkout, and the
// binary reports on the naive twins exactly the findings oncelint reports there.
//
// Building golangci-lint takes minutes, so the binary is kept in the user's cache
// directory under a key made of everything it is built from: golangci-lint's version, the
// configuration, the Go version and the once module's files the plugin compiles.
func TestGolangciCustom_ReportsTheNaiveTwins(t *testing.T) {
	root := moduleRoot(t)
	bin := customBinary(t, root)

	dir := t.TempDir()
	cfg := filepath.Join(dir, ".golangci.yml")
	if err := os.WriteFile(cfg, []byte(golangciYML), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"run", "--config", cfg, "--output.text.path", "stdout", "--output.text.print-issued-lines=false", "--show-stats=false"}, naiveTwins...)...)
	cmd.Dir = root
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if code := exitCode(err); code != 1 {
		t.Fatalf("custom-gcl run: exit %d (%v), want 1 (issues)\n%s\n%s", code, err, out.String(), errOut.String())
	}
	// file:line:col: onceNNN: message (oncelint); golangci-lint prefixes the analyzer's
	// name and prints each related place as an issue of its own, which oncelint -json
	// keeps inside its finding.
	issue := regexp.MustCompile(`^(\S+?\.go:\d+:\d+): once\d+(\(related information\))?: (.*) \(oncelint\)$`)
	var got []string
	for _, line := range strings.Split(out.String(), "\n") {
		if m := issue.FindStringSubmatch(line); m != nil && m[2] == "" {
			got = append(got, filepath.ToSlash(m[1])+": "+m[3])
		}
	}
	slices.Sort(got)

	want := standalone(t, root)
	if len(want) == 0 {
		t.Fatal("oncelint finds nothing on the naive twins")
	}
	if !slices.Equal(got, want) {
		t.Errorf("custom-gcl run on the naive twins:\n%s\nwant oncelint's findings:\n%s\n(full output:\n%s%s)",
			strings.Join(got, "\n"), strings.Join(want, "\n"), out.String(), errOut.String())
	}
}

// standalone returns oncelint's findings on the naive twins, relative to root.
func standalone(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "oncelint", "-json"}, naiveTwins...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	// With -json the standalone driver exits 0 whatever it finds (the findings are in
	// the output; the caller checks there are some).
	if code := exitCode(err); code != 0 {
		t.Fatalf("oncelint -json: exit %d (%v), want 0\n%s", code, err, out)
	}
	var res struct {
		Diagnostics map[string]map[string][]struct{ Posn, Message string }
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("oncelint -json: %v\n%s", err, out)
	}
	tree := res.Diagnostics
	seen := map[string]bool{}
	var want []string
	for _, checks := range tree {
		for _, diags := range checks {
			for _, d := range diags {
				rel, err := filepath.Rel(root, d.Posn)
				if err != nil {
					t.Fatal(err)
				}
				f := filepath.ToSlash(rel) + ": " + d.Message
				if !seen[f] {
					seen[f] = true
					want = append(want, f)
				}
			}
		}
	}
	slices.Sort(want)
	return want
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	return -1
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// customBinary returns the golangci-lint built by golangci-lint custom with the plugin of
// the checkout at root, building it when the cache holds none for these inputs.
func customBinary(t *testing.T, root string) string {
	t.Helper()
	key := inputsKey(t, root)
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(cacheDir, "oncekit-once", "custom-gcl", key)
	bin := filepath.Join(dest, "custom-gcl")
	if _, err := os.Stat(bin); err == nil {
		t.Logf("using %s, built for these inputs", bin)
		return bin
	}

	work := t.TempDir()
	// golangci-lint custom clones golangci-lint's repository at the version's tag. The same
	// source is on the module proxy: a local repository made from it stands in for the
	// clone (git's url.<base>.insteadOf, which custom passes through to git).
	src := golangciSource(t, work)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	build := filepath.Join(work, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf(customGCL, golangciVersion, dest, root)
	if err := os.WriteFile(filepath.Join(build, ".custom-gcl.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@"+golangciVersion, "custom", "-v")
	cmd.Dir = build
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=url.file://"+filepath.ToSlash(src)+".insteadOf",
		"GIT_CONFIG_VALUE_0=https://github.com/golangci/golangci-lint.git",
		"GOFLAGS=-buildvcs=false",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dest)
		t.Fatalf("golangci-lint custom: %v\n%s", err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("golangci-lint custom built no %s: %v", bin, err)
	}
	return bin
}

// golangciSource makes a git repository of golangci-lint's source at golangciVersion,
// tagged with it, from the module proxy's copy.
func golangciSource(t *testing.T, work string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/golangci/golangci-lint/v2@"+golangciVersion).Output()
	if err != nil {
		t.Fatalf("go mod download golangci-lint: %v\n%s", err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download golangci-lint: %v\n%s", err, out)
	}
	src := filepath.Join(work, "golangci-lint")
	if err := os.CopyFS(src, os.DirFS(mod.Dir)); err != nil {
		t.Fatalf("copying golangci-lint's source: %v", err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=once", "-c", "user.email=once@localhost", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", golangciVersion)
	git("tag", golangciVersion)
	return src
}

// inputsKey hashes what the custom binary is built from.
func inputsKey(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", golangciVersion, customGCL, goVersion(t))
	// The once module's packages the plugin compiles, with their files.
	cmd := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if .Module.Main}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}{{end}}`, "./plugin")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./plugin: %v", err)
	}
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, f := range fields[1:] {
			files = append(files, filepath.Join(fields[0], f))
		}
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s\n", strings.TrimPrefix(name, root))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:24]
}

func goVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
