// Command measure runs oncelint on the real-world corpus and prints its precision over every
// finding and its recall over the labelled FLAG rows, per repository and in total.
//
//	analyzer/testdata/realworld/trees.sh     # once: recreate the trees at the pinned commits
//	go run ./internal/realworld/measure      # from the module root
//
// Flags: -corpus DIR (a directory holding repos.txt, labels.tsv and verdicts.tsv; default
// analyzer/testdata/realworld), -trees DIR (default $ONCE_REALWORLD_TREES, else
// once-realworld under the user cache directory), -oncelint BINARY (default the module's
// tool, go tool -n oncelint), -repo owner/name (only these, comma-separated), -strict (run
// oncelint -strict), -v (every finding with its verdict), -save DIR (keep each
// repository's oncelint output) and -rescore DIR (score saved outputs again after editing
// the verdicts, without running oncelint). -labels only checks that every label names a
// file its tree holds, as a round's labels are checked before its first run; a run prints
// the labels that fail the check too.
//
// Per repository it prints oncelint's coverage summary, and the peak memory (of the
// largest process) and CPU time of the run. With -cost it runs each repository twice more
// from a fresh copy of one build cache warmed by go build: oncelint, and a forced go vet
// on the same packages, and prints the ratios (CPU and peak memory against go vet).
//
// It exits 1 when a finding has no verdict (it prints the finding and a row to fill in)
// or a repository could not be analysed, 2 on bad flags or corpus files.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/oncekit/once/internal/realworld"
)

func main() {
	os.Exit(run())
}

func run() int {
	corpusDir := flag.String("corpus", "", "the corpus `directory` (default analyzer/testdata/realworld of this module)")
	trees := flag.String("trees", "", "the `directory` holding the trees (default $ONCE_REALWORLD_TREES, else once-realworld in the user cache dir)")
	lint := flag.String("oncelint", "", "the oncelint `binary` to measure (default the module's tool)")
	only := flag.String("repo", "", "measure only these `repositories` (owner/name, comma-separated)")
	verbose := flag.Bool("v", false, "print every finding with its verdict")
	save := flag.String("save", "", "also write each repository's oncelint -json output to `directory` (owner+name.json)")
	rescore := flag.String("rescore", "", "score the outputs saved in `directory` by -save instead of running oncelint")
	strict := flag.Bool("strict", false, "run oncelint -strict")
	cost := flag.Bool("cost", false, "also measure oncelint against a forced go vet from a fresh copy of a warmed build cache")
	labelsOnly := flag.Bool("labels", false, "only check that every label names a file the trees hold (before a round's first run)")
	flag.Parse()

	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 2
	}
	if *corpusDir == "" {
		*corpusDir = filepath.Join(root, "analyzer", "testdata", "realworld")
	}
	if *trees == "" {
		*trees, err = realworld.TreesDir()
		if err != nil {
			fmt.Fprintln(os.Stderr, "measure:", err)
			return 2
		}
	}
	c, err := realworld.Load(*corpusDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 2
	}
	if *only != "" {
		keep := map[string]bool{}
		for _, n := range strings.Split(*only, ",") {
			keep[strings.TrimSpace(n)] = true
		}
		c = c.Only(keep)
		if len(c.Repos) == 0 {
			fmt.Fprintf(os.Stderr, "measure: no repository of the corpus is named by -repo %s\n", *only)
			return 2
		}
	}
	unplaced := 0
	for _, r := range c.Repos {
		for _, u := range c.Unplaced(r, filepath.Join(*trees, r.TreeName())) {
			fmt.Fprintln(os.Stderr, "measure: label never matches:", u)
			unplaced++
		}
	}
	if *labelsOnly {
		fmt.Fprintf(os.Stderr, "measure: %d labels checked; %d places they name are files their tree does not hold\n", len(c.Labels), unplaced)
		return map[bool]int{true: 0, false: 1}[unplaced == 0]
	}
	if *lint == "" && *rescore == "" {
		out, err := exec.Command("go", "tool", "-n", "oncelint").Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "measure: building oncelint: %v\n", stderrOf(err))
			return 2
		}
		*lint = strings.TrimSpace(string(out))
	}

	var all []realworld.Finding
	failed := map[string]string{}
	idx := realworld.NewFuncIndex()
	for _, r := range c.Repos {
		start := time.Now()
		fs, u, err := analyse(*lint, *trees, r, idx, *save, *rescore, *strict)
		if err != nil {
			failed[r.Name] = err.Error()
			fmt.Fprintf(os.Stderr, "%s: %v\n", r.Name, err)
			continue
		}
		fmt.Fprintf(os.Stderr, "%s: %d findings in %s (cpu %.1f s, peak %d MB)\n", r.Name, len(fs), time.Since(start).Round(100*time.Millisecond), u.cpu, u.rssMB)
		if u.summary != nil {
			fmt.Fprintf(os.Stderr, "%s: coverage: %s\n", r.Name, u.summary)
		}
		if *cost {
			if line, err := measureCost(*lint, *trees, r); err != nil {
				fmt.Fprintf(os.Stderr, "%s: cost: %v\n", r.Name, err)
			} else {
				fmt.Fprintf(os.Stderr, "%s: cost: %s\n", r.Name, line)
			}
		}
		all = append(all, fs...)
	}
	res := realworld.Score(c, all, failed)
	if *verbose {
		for _, j := range res.Findings {
			v := "?"
			if j.Verdict != nil {
				v = map[bool]string{true: "TP", false: "FP"}[j.Verdict.TP] + " " + j.Verdict.Why
			}
			fmt.Printf("%s\n    => %s\n", j.Finding, v)
		}
		fmt.Println()
	}
	res.Write(os.Stdout)
	if !res.OK() {
		return 1
	}
	return 0
}

// usage is what one run cost, and the summary it printed.
type usage struct {
	cpu     float64 // user + system seconds of the process and the processes it waited for
	rssMB   int64   // peak resident memory of the largest of them
	summary *realworld.Summary
}

// analyse runs oncelint -json on one repository's packages (or reads the output saved by
// an earlier run from rescore) and returns its findings.
func analyse(lint, trees string, r realworld.Repo, idx *realworld.FuncIndex, save, rescore string, strict bool) ([]realworld.Finding, usage, error) {
	var u usage
	tree := filepath.Join(trees, r.TreeName())
	head, err := exec.Command("git", "-C", tree, "rev-parse", "HEAD").Output()
	if err != nil {
		return nil, u, fmt.Errorf("no tree at %s (run analyzer/testdata/realworld/trees.sh): %v", tree, stderrOf(err))
	}
	if got := strings.TrimSpace(string(head)); got != r.Commit {
		return nil, u, fmt.Errorf("tree %s is at %s, the corpus pins %s (run trees.sh)", tree, got, r.Commit)
	}
	if rescore != "" {
		out, err := os.ReadFile(filepath.Join(rescore, r.TreeName()+".json"))
		if err != nil {
			return nil, u, fmt.Errorf("reading the saved output: %w", err)
		}
		u.summary = realworld.ParseSummary(out)
		fs, err := realworld.ParseJSON(r.Name, tree, out, idx.EnclosingFunc)
		return fs, u, err
	}
	args := []string{"-json", "-test=false"}
	if strict {
		args = append(args, "-strict")
	}
	args = append(args, r.Packages...)
	cmd := exec.Command(lint, args...)
	cmd.Dir = filepath.Join(tree, filepath.FromSlash(r.Dir))
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	u.cpu, u.rssMB = rusage(cmd)
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 3) {
		return nil, u, fmt.Errorf("oncelint %s: %v\n%s", strings.Join(args, " "), err, lastLines(stderr.String(), 20))
	}
	if save != "" {
		if err := os.MkdirAll(save, 0o755); err != nil {
			return nil, u, fmt.Errorf("saving the output: %w", err)
		}
		if err := os.WriteFile(filepath.Join(save, r.TreeName()+".json"), stdout.Bytes(), 0o644); err != nil {
			return nil, u, fmt.Errorf("saving the output: %w", err)
		}
	}
	u.summary = realworld.ParseSummary(stdout.Bytes())
	fs, err := realworld.ParseJSON(r.Name, tree, stdout.Bytes(), idx.EnclosingFunc)
	return fs, u, err
}

// rusage returns the CPU seconds and peak memory (MB) of a finished command: Linux
// counts in them the processes it waited for (go vet and the tool's processes).
func rusage(cmd *exec.Cmd) (float64, int64) {
	if cmd.ProcessState == nil {
		return 0, 0
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return cpu, ru.Maxrss / 1024
}

// measureCost runs oncelint and a forced go vet on the repository's packages, each from a
// fresh copy of one build cache warmed by go build (so that neither finds cached vet
// results and both find the compiled dependencies), and returns the line of numbers.
func measureCost(lint, trees string, r realworld.Repo) (string, error) {
	scratch, err := os.MkdirTemp("", "once-cost")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	dir := filepath.Join(trees, r.TreeName(), filepath.FromSlash(r.Dir))
	warm := filepath.Join(scratch, "warm")
	env := append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off")
	build := exec.Command("go", append([]string{"build"}, r.Packages...)...)
	build.Dir, build.Env = dir, append(env, "GOCACHE="+warm)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, lastLines(string(out), 10))
	}
	runFresh := func(name string, args ...string) (float64, int64, float64, error) {
		cache := filepath.Join(scratch, "run")
		os.RemoveAll(cache)
		if out, err := exec.Command("cp", "-a", warm, cache).CombinedOutput(); err != nil {
			return 0, 0, 0, fmt.Errorf("copying the cache: %v %s", err, out)
		}
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, append(env, "GOCACHE="+cache)
		start := time.Now()
		cmd.Run() // findings and errors alike: what is measured is the cost
		cpu, rss := rusage(cmd)
		return cpu, rss, time.Since(start).Seconds(), nil
	}
	vcpu, vrss, vwall, err := runFresh("go", append([]string{"vet"}, r.Packages...)...)
	if err != nil {
		return "", err
	}
	ocpu, orss, owall, err := runFresh(lint, append([]string{"-test=false"}, r.Packages...)...)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("go vet wall %.1f s cpu %.1f s peak %d MB; oncelint wall %.1f s cpu %.1f s peak %d MB; cpu ratio %.2f, peak ratio %.2f",
		vwall, vcpu, vrss, owall, ocpu, orss, ocpu/vcpu, float64(orss)/float64(vrss)), nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: %v", stderrOf(err))
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run it from inside the once module")
	}
	return filepath.Dir(gomod), nil
}

func stderrOf(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) && len(exit.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(exit.Stderr))
	}
	return err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
