package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// vetIn runs go vet with tool in testdata/layers on one build cache and returns its
// findings as sorted "file:line:col: message" lines, relative to the module.
func vetIn(t *testing.T, gocache, toolchain, tool string, jsonOut bool, pkg string) []string {
	t.Helper()
	args := []string{"vet", "-vettool=" + tool, "-catalog=oncelint.json"}
	if jsonOut {
		args = append(args, "-json")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = filepath.Join("testdata", "layers")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN="+toolchain, "GOCACHE="+gocache)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if !jsonOut {
		if _, failed := err.(*exec.ExitError); err != nil && !failed {
			t.Fatalf("go vet %s: %v", pkg, err)
		}
		return findingLines(t, stderr.String())
	}
	if err != nil {
		t.Fatalf("go vet -json %s: %v\n%s", pkg, err, stderr.String())
	}
	var found []string
	abs, _ := filepath.Abs(cmd.Dir)
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var tree map[string]map[string][]struct{ Posn, Message string }
		if err := dec.Decode(&tree); err != nil {
			t.Fatalf("go vet -json %s: %v\n%s", pkg, err, stdout.String())
		}
		for _, byCheck := range tree {
			for _, diags := range byCheck {
				for _, d := range diags {
					found = append(found, strings.TrimPrefix(d.Posn, abs+"/")+": "+d.Message)
				}
			}
		}
	}
	slices.Sort(found)
	return found
}

// findingLines keeps the lines of text output that are findings, relative to the module.
func findingLines(t *testing.T, out string) []string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", "layers"))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimPrefix(line, abs+"/")
		if strings.HasSuffix(line, ")") && strings.Contains(line, "(ONCE") {
			found = append(found, line)
		}
	}
	slices.Sort(found)
	return found
}

// standalone holds oncelint's own findings on a and b, computed once for the tests that
// compare go vet's with them: two identical go vet commands running at the same time on
// one build cache would race for one cache entry.
var standalone struct {
	sync.Mutex
	found map[string][]string
}

// standaloneFindings returns oncelint's own findings on a and b.
func standaloneFindings(t *testing.T) map[string][]string {
	t.Helper()
	standalone.Lock()
	defer standalone.Unlock()
	if standalone.found == nil {
		found := map[string][]string{}
		for _, pkg := range []string{"./a", "./b"} {
			out, _ := run(t, "layers", nil, oncelint, "-catalog=oncelint.json", pkg)
			if found[pkg] = findingLines(t, out); len(found[pkg]) != 1 {
				t.Fatalf("oncelint %s: want one finding, got %q; it printed:\n%s", pkg, found[pkg], out)
			}
		}
		standalone.found = found
	}
	return standalone.found
}

// vetSequences vets a (which imports b) and b one after the other, in both orders, each
// order on a fresh build cache, and reports every run whose findings differ from
// oncelint's own on the same package.
func vetSequences(t *testing.T, toolchain, tool string) (mismatches []string) {
	t.Helper()
	want := standaloneFindings(t)
	for _, jsonOut := range []bool{false, true} {
		// The third run repeats the first command, which may reuse its own cached results.
		for _, order := range [][]string{{"./a", "./b", "./a"}, {"./b", "./a", "./b"}} {
			gocache := t.TempDir()
			for _, pkg := range order {
				got := vetIn(t, gocache, toolchain, tool, jsonOut, pkg)
				if !slices.Equal(got, want[pkg]) {
					mismatches = append(mismatches,
						"json="+map[bool]string{false: "no", true: "yes"}[jsonOut]+
							" order "+strings.Join(order, ",")+": go vet "+pkg+" printed "+
							strings.Join(got, "; ")+", oncelint "+pkg+" prints "+strings.Join(want[pkg], "; "))
				}
			}
		}
	}
	return mismatches
}

// go vet gives oncelint's own findings whatever was vetted before on the same build cache:
// a then b, and b then a. Go 1.26's cmd/go keys its cached vet result without saying
// whether the package was vetted for findings or only for facts; the tool's -V=full ID
// keeps the two apart. ONCE_VET_TOOLCHAINS adds other toolchains to try (go1.27.3, ...).
func TestVet_FindingsDoNotDependOnWhatWasVettedBefore(t *testing.T) {
	t.Parallel()
	toolchains := append([]string{"local"}, strings.Fields(os.Getenv("ONCE_VET_TOOLCHAINS"))...)
	for _, tc := range toolchains {
		for _, m := range vetSequences(t, tc, oncelint) {
			t.Errorf("GOTOOLCHAIN=%s: %s", tc, m)
		}
	}
}

// The negative control: the same sequences with a tool that answers -V=full with one
// fixed ID, as a stock analysis driver does, give other findings than the standalone run
// on this toolchain.
func TestVet_FixedToolIDDependsOnHistory(t *testing.T) {
	t.Parallel()
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err != nil || !strings.HasPrefix(string(out), "go1.26") {
		t.Skipf("the cache key leaves out the facts-only bit on Go 1.26 only; this is %s", out)
	}
	stock := filepath.Join(t.TempDir(), "stock-id")
	script := "#!/bin/sh\nif [ \"$1\" = -V=full ]; then echo 'oncelint version devel buildID=fixed'; exit 0; fi\nexec " + oncelint + " \"$@\"\n"
	if err := os.WriteFile(stock, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if m := vetSequences(t, "local", stock); len(m) == 0 {
		t.Errorf("with a fixed tool ID every sequence gave the standalone findings; the test above cannot fail")
	} else {
		t.Logf("with a fixed tool ID:\n%s", strings.Join(m, "\n"))
	}
}
