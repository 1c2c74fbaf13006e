package realworld

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Judged is a finding with the verdict that covers it.
type Judged struct {
	Finding
	Verdict *Verdict // nil: no verdict covers it, which fails the run
}

// Count is one repository's (or the total's) numbers.
type Count struct {
	Findings, TP, FP int // FP counts findings judged false; unjudged are neither
	Unjudged         int
	Flag, Found      int // FLAG rows, and those a finding matches at any alternative
	Strict           int // FLAG rows a finding matches at the first function named
	NoFlag, Flagged  int // NO-FLAG rows, and those a finding matches
}

// Precision is TP over every finding (unjudged ones included, so they cannot help).
func (c Count) Precision() float64 { return ratio(c.TP, c.Findings) }

// Recall is found FLAG rows over all FLAG rows, counting a finding at any of a row's
// alternative places (the nearest reasonable report location).
func (c Count) Recall() float64 { return ratio(c.Found, c.Flag) }

// StrictRecall counts only findings at the first place a row names.
func (c Count) StrictRecall() float64 { return ratio(c.Strict, c.Flag) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Result is the outcome of matching one run's findings against the corpus.
type Result struct {
	Repos     []string // in corpus order
	ByRepo    map[string]*Count
	Total     Count
	Findings  []Judged
	Missed    []Label   // FLAG rows no finding matches
	Flagged   []Label   // NO-FLAG rows a finding matches
	Unused    []Verdict // verdicts that matched no finding (stale, for the reader)
	Failed    map[string]string
	Unjudged  []Finding
	FalsePos  []Judged
	FoundRows []Label
}

// Score matches findings against labels and verdicts. failed names repositories whose run
// did not complete (their labels still count as missed). A finding takes the verdict with
// the longest Match that its message contains among those with its repo, file, function
// and code; a label row is matched by any finding with its repo, file, code and one of its
// functions.
func Score(c *Corpus, findings []Finding, failed map[string]string) *Result {
	res := &Result{ByRepo: map[string]*Count{}, Failed: failed}
	for _, r := range c.Repos {
		res.Repos = append(res.Repos, r.Name)
		res.ByRepo[r.Name] = &Count{}
	}
	count := func(repo string) *Count {
		if n, ok := res.ByRepo[repo]; ok {
			return n
		}
		n := &Count{}
		res.ByRepo[repo] = n
		res.Repos = append(res.Repos, repo)
		return n
	}

	byKey := map[string][]int{}
	for i, v := range c.Verdicts {
		k := v.Repo + " " + v.File + " " + v.Func + " " + v.Code
		byKey[k] = append(byKey[k], i)
	}
	used := make([]bool, len(c.Verdicts))
	for _, f := range findings {
		n := count(f.Repo)
		n.Findings++
		j := Judged{Finding: f}
		best := -1
		for _, i := range byKey[f.Key()] {
			v := c.Verdicts[i]
			if strings.Contains(f.Message, v.Match) && (best < 0 || len(v.Match) > len(c.Verdicts[best].Match)) {
				best = i
			}
		}
		switch {
		case best < 0:
			n.Unjudged++
			res.Unjudged = append(res.Unjudged, f)
		case c.Verdicts[best].TP:
			n.TP++
		default:
			n.FP++
		}
		if best >= 0 {
			used[best] = true
			j.Verdict = &c.Verdicts[best]
			if !j.Verdict.TP {
				res.FalsePos = append(res.FalsePos, j)
			}
		}
		res.Findings = append(res.Findings, j)
	}
	for i, v := range c.Verdicts {
		if !used[i] && failed[v.Repo] == "" {
			res.Unused = append(res.Unused, v)
		}
	}

	reported := map[string]bool{}
	for _, f := range findings {
		reported[f.Key()] = true
	}
	for _, l := range c.Labels {
		n := count(l.Repo)
		hit, first := false, false
		for i, p := range l.Places() {
			if reported[l.Repo+" "+p.File+" "+p.Func+" "+l.Code] {
				hit = true
				first = first || i == 0
			}
		}
		if l.Flag {
			n.Flag++
			if first {
				n.Strict++
			}
			if hit {
				n.Found++
				res.FoundRows = append(res.FoundRows, l)
			} else {
				res.Missed = append(res.Missed, l)
			}
		} else {
			n.NoFlag++
			if hit {
				n.Flagged++
				res.Flagged = append(res.Flagged, l)
			}
		}
	}
	for _, r := range res.Repos {
		n := res.ByRepo[r]
		res.Total.Findings += n.Findings
		res.Total.TP += n.TP
		res.Total.FP += n.FP
		res.Total.Unjudged += n.Unjudged
		res.Total.Flag += n.Flag
		res.Total.Found += n.Found
		res.Total.Strict += n.Strict
		res.Total.NoFlag += n.NoFlag
		res.Total.Flagged += n.Flagged
	}
	return res
}

// OK reports whether every finding has a verdict and every repository ran.
func (r *Result) OK() bool { return len(r.Unjudged) == 0 && len(r.Failed) == 0 }

// Write prints the table per repository and in total, then the lists a reader acts on:
// findings without a verdict (as rows to paste into verdicts.tsv), false positives,
// missed FLAG rows, flagged NO-FLAG rows and verdicts that matched nothing.
func (r *Result) Write(w io.Writer) {
	fmt.Fprintf(w, "%-34s %8s %4s %4s %9s %5s %6s %6s %7s %7s %8s\n", "repository", "findings", "TP", "FP", "precision", "FLAG", "strict", "found", "rec.str", "rec.len", "NO-FLAG!")
	line := func(name string, c Count) {
		fmt.Fprintf(w, "%-34s %8d %4d %4d %9s %5d %6d %6d %7s %7s %4d/%-3d\n", name, c.Findings, c.TP, c.FP,
			fmt.Sprintf("%.2f", c.Precision()), c.Flag, c.Strict, c.Found, fmt.Sprintf("%.2f", c.StrictRecall()), fmt.Sprintf("%.2f", c.Recall()), c.Flagged, c.NoFlag)
	}
	for _, name := range r.Repos {
		n := *r.ByRepo[name]
		if msg := r.Failed[name]; msg != "" {
			name += " (FAILED)"
		}
		line(name, n)
	}
	line("total", r.Total)
	fmt.Fprintf(w, "\nprecision %.2f (%d TP of %d findings), recall %.2f strict (%d of %d FLAG rows at the place named first), %.2f lenient (%d of %d at any place named), %d of %d NO-FLAG rows flagged\n",
		r.Total.Precision(), r.Total.TP, r.Total.Findings, r.Total.StrictRecall(), r.Total.Strict, r.Total.Flag, r.Total.Recall(), r.Total.Found, r.Total.Flag, r.Total.Flagged, r.Total.NoFlag)

	if len(r.Failed) > 0 {
		fmt.Fprintf(w, "\nrepositories that did not run:\n")
		names := make([]string, 0, len(r.Failed))
		for n := range r.Failed {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %s: %s\n", n, r.Failed[n])
		}
	}
	if len(r.Unjudged) > 0 {
		fmt.Fprintf(w, "\nfindings with no verdict (judge each, then add the row to verdicts.tsv):\n")
		for _, f := range r.Unjudged {
			fmt.Fprintf(w, "  %s\n", f)
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t-\t?\t?\n", f.Repo, f.File, f.Func, f.Code)
		}
	}
	if len(r.FalsePos) > 0 {
		fmt.Fprintf(w, "\nfalse positives:\n")
		for _, j := range r.FalsePos {
			fmt.Fprintf(w, "  %s %s:%d %s %s: %s\n", j.Repo, j.File, j.Line, j.Func, j.Code, j.Verdict.Why)
		}
	}
	if len(r.Missed) > 0 {
		fmt.Fprintf(w, "\nFLAG rows not reported:\n")
		for _, l := range r.Missed {
			fmt.Fprintf(w, "  %s %s:%d %s %s: %s\n", l.Repo, l.File, l.Line, strings.Join(l.Funcs, "|"), l.Code, l.Why)
		}
	}
	if len(r.Flagged) > 0 {
		fmt.Fprintf(w, "\nNO-FLAG rows reported:\n")
		for _, l := range r.Flagged {
			fmt.Fprintf(w, "  %s %s:%d %s %s: %s\n", l.Repo, l.File, l.Line, strings.Join(l.Funcs, "|"), l.Code, l.Why)
		}
	}
	if len(r.Unused) > 0 {
		fmt.Fprintf(w, "\nverdicts no finding matched (stale once the analyzer stops reporting them):\n")
		for _, v := range r.Unused {
			fmt.Fprintf(w, "  %s: %s %s %s %s\n", v.Pos, v.Repo, v.File, v.Func, v.Code)
		}
	}
}
