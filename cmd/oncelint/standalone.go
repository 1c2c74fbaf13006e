package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/oncekit/once/analyzer"
)

// diag is one finding of go vet -json.
type diag struct {
	Posn     string          `json:"posn"`
	End      string          `json:"end,omitempty"`
	Message  string          `json:"message"`
	Category string          `json:"category,omitempty"`
	Related  []related       `json:"related,omitempty"`
	Fixes    json.RawMessage `json:"suggested_fixes,omitempty"`

	pkg, check, fingerprint, fn string
}

type related struct {
	Posn    string `json:"posn"`
	End     string `json:"end,omitempty"`
	Message string `json:"message"`
}

// forward is a flag passed on to the tool through go vet.
type forward struct {
	name   string
	isBool bool
	out    *[]string
}

func (f *forward) String() string   { return "" }
func (f *forward) IsBoolFlag() bool { return f.isBool }
func (f *forward) Set(v string) error {
	*f.out = append(*f.out, "-"+f.name+"="+v)
	return nil
}

// standalone checks the packages through go vet with this tool and prints each finding
// once, then the coverage summary. It returns the exit status.
func standalone(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("oncelint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the findings and the summary as JSON")
	asSARIF := fs.Bool("sarif", false, "print a SARIF 2.1.0 log")
	tests := fs.Bool("test", true, "report findings in test files too")
	baseline := fs.String("baseline", "", "report only the findings not recorded in `file`")
	writeBaseline := fs.Bool("write-baseline", false, "record the run's findings in the -baseline file instead of reporting them")
	var tool, build []string
	for _, name := range []string{"strict"} {
		fs.Var(&forward{name: name, isBool: true, out: &tool}, name, "report every catalogued effect no promise covers, on a repeat path or not")
	}
	fs.Var(&forward{name: "catalog", out: &tool}, "catalog", "extra catalogue `files` (comma-separated or repeated), resolved from the module root")
	fs.Var(&forward{name: "schema", out: &tool}, "schema", "schema `files` or directories with unique constraints, for ONCE005")
	for _, a := range analyzer.Analyzers {
		fs.Var(&forward{name: a.Name, isBool: true, out: &tool}, a.Name, "enable "+a.Name+" (or =false to disable it)")
	}
	for _, name := range []string{"tags", "mod", "modfile", "overlay"} {
		fs.Var(&forward{name: name, out: &build}, name, "the go command's -"+name+" build flag")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if *writeBaseline && *baseline == "" {
		fmt.Fprintln(stderr, "oncelint: -write-baseline needs -baseline=FILE")
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "oncelint: %v\n", err)
		return 1
	}
	vetArgs := append([]string{"vet", "-vettool=" + exe}, build...)
	vetArgs = append(vetArgs, "-json", "-summary")
	vetArgs = append(vetArgs, tool...)
	vetArgs = append(vetArgs, fs.Args()...)
	cmd := exec.Command("go", vetArgs...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	stderr.Write(errOut.Bytes())
	code := 0
	var exit *exec.ExitError
	if errors.As(runErr, &exit) {
		code = 1
	} else if runErr != nil {
		fmt.Fprintf(stderr, "oncelint: go vet: %v\n", runErr)
		return 1
	}

	r := &report{tests: *tests}
	if err := r.read(&out, stderr); err != nil {
		fmt.Fprintf(stderr, "oncelint: reading go vet's output: %v\n", err)
		return 1
	}
	if r.failed {
		code = 1
	}
	if strict, once001 := toolFlags(tool); once001 {
		r.join(strict)
	}
	root := moduleRoot()
	fingerprints(r.diags, root)
	if *baseline != "" {
		if *writeBaseline {
			if err := writeBaselineFile(*baseline, r.diags); err != nil {
				fmt.Fprintf(stderr, "oncelint: %v\n", err)
				return 1
			}
			sum := r.summary(nil)
			sum.Baselined = len(r.diags)
			r.diags = nil
			printSummary(stderr, sum)
			fmt.Fprintf(stderr, "oncelint: %d findings recorded in %s\n", sum.Baselined, *baseline)
			return code
		}
		known, err := readBaseline(*baseline)
		if err != nil {
			fmt.Fprintf(stderr, "oncelint: %v\n", err)
			return 1
		}
		r.diags, r.baselined = applyBaseline(r.diags, known)
	}
	sum := r.summary(nil)
	switch {
	case *asSARIF:
		if err := writeSARIF(stdout, root, r.diags, sum); err != nil {
			fmt.Fprintf(stderr, "oncelint: %v\n", err)
			return 1
		}
	case *asJSON:
		tree := map[string]map[string][]*diag{}
		for _, d := range r.diags {
			if tree[d.pkg] == nil {
				tree[d.pkg] = map[string][]*diag{}
			}
			tree[d.pkg][d.check] = append(tree[d.pkg][d.check], d)
		}
		b, err := json.MarshalIndent(struct {
			Diagnostics map[string]map[string][]*diag `json:"diagnostics"`
			Errors      []string                      `json:"errors,omitempty"`
			Summary     *summary                      `json:"summary"`
		}{tree, r.errors, sum}, "", "\t")
		if err != nil {
			fmt.Fprintf(stderr, "oncelint: %v\n", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
		return code
	default:
		for _, d := range r.diags {
			fmt.Fprintf(stderr, "%s: %s\n", d.Posn, d.Message)
			for _, rel := range d.Related {
				fmt.Fprintf(stderr, "%s: \t%s\n", rel.Posn, rel.Message)
			}
		}
		printSummary(stderr, sum)
	}
	if code == 0 && len(r.diags) > 0 {
		code = 3
	}
	return code
}

// report is what go vet printed, gathered.
type report struct {
	tests     bool
	diags     []*diag
	cover     []analyzer.Coverage
	errors    []string
	failed    bool
	baselined int
}

// read decodes go vet's JSON: one object per package, holding per check the findings or
// {"error": ...}. Coverage diagnostics are set apart; a finding two packages report (an
// effect reached from both) is kept once, with the related places of both.
func (r *report) read(in io.Reader, stderr io.Writer) error {
	seen := map[string]*diag{}
	dec := json.NewDecoder(in)
	for dec.More() {
		var pkgs map[string]map[string]json.RawMessage
		if err := dec.Decode(&pkgs); err != nil {
			return err
		}
		names := make([]string, 0, len(pkgs))
		for n := range pkgs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, pkg := range names {
			for check, raw := range pkgs[pkg] {
				var ds []*diag
				if err := json.Unmarshal(raw, &ds); err != nil {
					var e struct{ Error string }
					json.Unmarshal(raw, &e)
					msg := fmt.Sprintf("%s: %s: %s", pkg, check, e.Error)
					r.errors = append(r.errors, msg)
					fmt.Fprintln(stderr, msg)
					r.failed = true
					continue
				}
				base, _, _ := strings.Cut(pkg, " ")
				for _, d := range ds {
					if d.Category == analyzer.CoverageCategory {
						var c analyzer.Coverage
						if json.Unmarshal([]byte(d.Message), &c) == nil && !strings.HasSuffix(base, "_test") {
							r.cover = append(r.cover, c)
						}
						continue
					}
					file, _, _ := strings.Cut(d.Posn, ":")
					if !r.tests && strings.HasSuffix(file, "_test.go") {
						continue
					}
					k := d.Posn + "\x00" + d.Category + "\x00" + d.Message
					if prev, ok := seen[k]; ok {
						prev.Related = mergeRelated(prev.Related, d.Related)
						continue
					}
					d.pkg, d.check = base, check
					seen[k] = d
					r.diags = append(r.diags, d)
				}
			}
		}
	}
	sort.SliceStable(r.diags, func(i, j int) bool { return lessPosn(r.diags[i].Posn, r.diags[j].Posn) })
	return nil
}

func mergeRelated(a, b []related) []related {
	for _, x := range b {
		dup := false
		for _, y := range a {
			dup = dup || x == y
		}
		if !dup {
			a = append(a, x)
		}
	}
	return a
}

// lessPosn orders file:line:col positions by file, then line and column as numbers.
func lessPosn(a, b string) bool {
	fa, la, ca := splitPosn(a)
	fb, lb, cb := splitPosn(b)
	if fa != fb {
		return fa < fb
	}
	if la != lb {
		return la < lb
	}
	return ca < cb
}
