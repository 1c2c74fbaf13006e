package once_test

import (
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The package is the eight promises, Outcome, keys and errors: its summary (go doc -short)
// fits in 70 lines, and no guard has a twin for a function without a value (every guard's Do
// takes one that returns only an error; the kinds that replay a value have one generic
// function each).
func TestDoc_ThePackageIsThePromises(t *testing.T) {
	t.Parallel()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := osexec.Command(goTool, "doc", "-short", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go doc -short: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 70 {
		t.Errorf("go doc -short lists %d lines, want at most 70:\n%s", len(lines), out)
	}
	twin := regexp.MustCompile(`^type \w+Func `)
	generic := regexp.MustCompile(`^type \w+\[`)
	for _, l := range lines {
		if twin.MatchString(l) || generic.MatchString(l) {
			t.Errorf("a guard twin or a generic guard: %s", l)
		}
	}
}
