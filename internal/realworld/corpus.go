// Package realworld measures oncelint on a labelled corpus of real public Go repositories:
// it reads the corpus files (the repositories and commits to scan, the labelled locations,
// the verdict on every finding), matches what oncelint reports against them, and prints
// precision over every finding and recall over the locations that must be flagged.
//
// The corpus itself lives in analyzer/testdata/realworld (see its README); the command
// that runs it is ./internal/realworld/measure. Only the matching and the reading of the
// files live here, so they are tested on small inputs without the trees.
package realworld

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Repo is one repository of the corpus: where it comes from, the commit its labels were
// read at, the module directory inside it and the packages scanned there.
type Repo struct {
	Name     string   // owner/name on GitHub
	Commit   string   // 40 hex digits
	Dir      string   // module directory relative to the repository root, "." for the root
	Packages []string // package patterns relative to Dir, as given to oncelint
}

// Place is a file and a function in it.
type Place struct{ File, Func string }

// Places returns where a report matches the label: each alternative function in the
// label's file, or, for an alternative written "other/file.go:Func", in that file (a root
// cause reported one call level up, in the file of the function that decides).
func (l Label) Places() []Place {
	var out []Place
	for _, fn := range l.Funcs {
		if file, name, ok := strings.Cut(fn, ":"); ok && strings.HasSuffix(file, ".go") {
			out = append(out, Place{File: file, Func: name})
			continue
		}
		out = append(out, Place{File: l.File, Func: fn})
	}
	return out
}

// TreeName is the directory a repository's tree lives in under the trees directory.
func (r Repo) TreeName() string { return strings.ReplaceAll(r.Name, "/", "+") }

// Label is one labelled location: a place where oncelint should report (FLAG) or
// should stay silent (NO-FLAG).
type Label struct {
	Repo  string
	File  string   // slash path relative to the repository root
	Funcs []string // the enclosing function; alternatives where the report may sit at either (see Places)
	Line  int      // line of the effect at the pinned commit (for the reader)
	Code  string   // ONCE001 ..
	Flag  bool
	Why   string
	Pos   string // corpus file:line, for messages
}

// Verdict is the judgement of findings: every finding of Code in Func of File that
// contains Match in its message (an empty Match matches any) is TP or FP.
type Verdict struct {
	Repo  string
	File  string
	Func  string
	Code  string
	Match string
	TP    bool
	Why   string
	Pos   string
}

// ParseRepos reads repos.txt: one repository a line, "owner/name commit dir package...",
// fields separated by spaces or tabs; "#" starts a comment.
func ParseRepos(name string, r io.Reader) ([]Repo, error) {
	var repos []Repo
	seen := map[string]bool{}
	err := eachLine(name, r, func(pos string, line string) error {
		f := strings.Fields(line)
		if len(f) < 4 {
			return fmt.Errorf("%s: want \"owner/name commit dir package...\", got %d fields", pos, len(f))
		}
		if err := checkRepoName(f[0]); err != nil {
			return fmt.Errorf("%s: %w", pos, err)
		}
		if !isCommit(f[1]) {
			return fmt.Errorf("%s: commit %q is not 40 hex digits", pos, f[1])
		}
		if seen[f[0]] {
			return fmt.Errorf("%s: repository %s listed twice", pos, f[0])
		}
		seen[f[0]] = true
		repos = append(repos, Repo{Name: f[0], Commit: f[1], Dir: f[2], Packages: f[3:]})
		return nil
	})
	return repos, err
}

// ParseLabels reads the labels file: tab-separated "repo file func line code label reason",
// where func may list alternatives separated by "|" (one written "file.go:Func" names a
// function of another file) and label is FLAG or NO-FLAG.
func ParseLabels(name string, r io.Reader) ([]Label, error) {
	var labels []Label
	err := eachLine(name, r, func(pos string, line string) error {
		f := strings.SplitN(line, "\t", 7)
		if len(f) != 7 {
			return fmt.Errorf("%s: want 7 tab-separated fields (repo file func line code label reason), got %d", pos, len(f))
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		l := Label{Repo: f[0], File: f[1], Code: f[4], Why: f[6], Pos: pos}
		if err := checkRepoName(l.Repo); err != nil {
			return fmt.Errorf("%s: %w", pos, err)
		}
		for _, fn := range strings.Split(f[2], "|") {
			if fn = strings.TrimSpace(fn); fn != "" {
				l.Funcs = append(l.Funcs, fn)
			}
		}
		if len(l.Funcs) == 0 {
			return fmt.Errorf("%s: empty function", pos)
		}
		for _, p := range l.Places() {
			if p.File == "" || p.Func == "" {
				return fmt.Errorf("%s: alternative %q names no file or no function", pos, p.File+":"+p.Func)
			}
		}
		n, err := strconv.Atoi(f[3])
		if err != nil || n <= 0 {
			return fmt.Errorf("%s: line %q is not a positive number", pos, f[3])
		}
		l.Line = n
		if err := checkCode(l.Code); err != nil {
			return fmt.Errorf("%s: %w", pos, err)
		}
		switch f[5] {
		case "FLAG":
			l.Flag = true
		case "NO-FLAG":
		default:
			return fmt.Errorf("%s: label %q is neither FLAG nor NO-FLAG", pos, f[5])
		}
		if l.File == "" || l.Why == "" {
			return fmt.Errorf("%s: file and reason are required", pos)
		}
		labels = append(labels, l)
		return nil
	})
	return labels, err
}

// ParseVerdicts reads the verdicts file: tab-separated "repo file func code match verdict
// reason", where match is a substring of the message ("-" for any) and verdict is TP or FP.
func ParseVerdicts(name string, r io.Reader) ([]Verdict, error) {
	var verdicts []Verdict
	seen := map[string]string{}
	err := eachLine(name, r, func(pos string, line string) error {
		f := strings.SplitN(line, "\t", 7)
		if len(f) != 7 {
			return fmt.Errorf("%s: want 7 tab-separated fields (repo file func code match verdict reason), got %d", pos, len(f))
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		v := Verdict{Repo: f[0], File: f[1], Func: f[2], Code: f[3], Match: f[4], Why: f[6], Pos: pos}
		if v.Match == "-" {
			v.Match = ""
		}
		if err := checkRepoName(v.Repo); err != nil {
			return fmt.Errorf("%s: %w", pos, err)
		}
		if err := checkCode(v.Code); err != nil {
			return fmt.Errorf("%s: %w", pos, err)
		}
		switch f[5] {
		case "TP":
			v.TP = true
		case "FP":
		default:
			return fmt.Errorf("%s: verdict %q is neither TP nor FP", pos, f[5])
		}
		if v.File == "" || v.Func == "" || v.Why == "" {
			return fmt.Errorf("%s: file, function and reason are required", pos)
		}
		k := strings.Join([]string{v.Repo, v.File, v.Func, v.Code, v.Match}, "\x00")
		if prev, ok := seen[k]; ok {
			return fmt.Errorf("%s: same finding judged at %s", pos, prev)
		}
		seen[k] = pos
		verdicts = append(verdicts, v)
		return nil
	})
	return verdicts, err
}

// Corpus is the three files together.
type Corpus struct {
	Repos    []Repo
	Labels   []Label
	Verdicts []Verdict
}

// Unplaced lists the labels of repo r naming a file its tree (at dir) does not hold: a
// path written from another directory than the repository's root, say. Such a place can
// never match a report, so a round's labels are checked against the trees before its run.
func (c *Corpus) Unplaced(r Repo, dir string) []string {
	var out []string
	for _, l := range c.Labels {
		if l.Repo != r.Name {
			continue
		}
		for _, p := range l.Places() {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p.File))); err != nil {
				out = append(out, fmt.Sprintf("%s: %s names %s, which %s does not hold at %.12s", l.Pos, p.Func, p.File, r.Name, r.Commit))
			}
		}
	}
	return out
}

// Load reads repos.txt, labels.tsv and verdicts.tsv from dir and checks that every label
// and verdict names a listed repository. A corpus before its first run has no verdicts.tsv:
// it has no verdicts.
func Load(dir string) (*Corpus, error) {
	var c Corpus
	read := func(file string, parse func(name string, r io.Reader) error) error {
		f, err := os.Open(filepath.Join(dir, file))
		if errors.Is(err, fs.ErrNotExist) && file == "verdicts.tsv" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the corpus: %w", err)
		}
		defer f.Close()
		return parse(file, f)
	}
	err := read("repos.txt", func(n string, r io.Reader) (err error) { c.Repos, err = ParseRepos(n, r); return })
	if err == nil {
		err = read("labels.tsv", func(n string, r io.Reader) (err error) { c.Labels, err = ParseLabels(n, r); return })
	}
	if err == nil {
		err = read("verdicts.tsv", func(n string, r io.Reader) (err error) { c.Verdicts, err = ParseVerdicts(n, r); return })
	}
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, r := range c.Repos {
		known[r.Name] = true
	}
	for _, l := range c.Labels {
		if !known[l.Repo] {
			return nil, fmt.Errorf("%s: repository %s is not in repos.txt", l.Pos, l.Repo)
		}
	}
	for _, v := range c.Verdicts {
		if !known[v.Repo] {
			return nil, fmt.Errorf("%s: repository %s is not in repos.txt", v.Pos, v.Repo)
		}
	}
	return &c, nil
}

// eachLine calls fn with each line that is not blank or a comment, and its position.
func eachLine(name string, r io.Reader, fn func(pos, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if err := fn(fmt.Sprintf("%s:%d", name, n), line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

func checkRepoName(s string) error {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("repository %q is not owner/name", s)
	}
	return nil
}

func checkCode(s string) error {
	if len(s) != 7 || !strings.HasPrefix(s, "ONCE00") || s[6] < '0' || s[6] > '9' {
		return fmt.Errorf("code %q is not ONCE000..ONCE009", s)
	}
	return nil
}

func isCommit(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Only returns the corpus restricted to the named repositories.
func (c *Corpus) Only(names map[string]bool) *Corpus {
	var o Corpus
	for _, r := range c.Repos {
		if names[r.Name] {
			o.Repos = append(o.Repos, r)
		}
	}
	for _, l := range c.Labels {
		if names[l.Repo] {
			o.Labels = append(o.Labels, l)
		}
	}
	for _, v := range c.Verdicts {
		if names[v.Repo] {
			o.Verdicts = append(o.Verdicts, v)
		}
	}
	return &o
}

// TreesDir is where the trees live: $ONCE_REALWORLD_TREES, else once-realworld in the
// user cache directory (outside any checkout, so no fetched code is ever committed).
func TreesDir() (string, error) {
	if d := os.Getenv("ONCE_REALWORLD_TREES"); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the trees: set ONCE_REALWORLD_TREES: %w", err)
	}
	return filepath.Join(cache, "once-realworld"), nil
}
