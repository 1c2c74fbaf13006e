package realworld_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/realworld"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// row joins fields with tabs, as the corpus files hold them.
func row(fields ...string) string { return strings.Join(fields, "\t") + "\n" }

func TestParseRepos_ReadsFieldsAndRefusesBadRows(t *testing.T) {
	t.Parallel()
	repos, err := realworld.ParseRepos("repos.txt", strings.NewReader(
		"# comment\n\nacme/shop "+commit+" . ./billing/... ./api\nacme/mail\t"+commit+"\tserver\t./...\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 2 || repos[0].Name != "acme/shop" || repos[0].Dir != "." ||
		strings.Join(repos[0].Packages, " ") != "./billing/... ./api" || repos[1].Dir != "server" {
		t.Fatalf("repos = %+v", repos)
	}
	if repos[0].TreeName() != "acme+shop" {
		t.Errorf("TreeName = %q", repos[0].TreeName())
	}
	for _, bad := range []struct{ in, want string }{
		{"acme/shop " + commit + " .\n", "repos.txt:1: want"},
		{"acme/shop abc . ./...\n", "repos.txt:1: commit \"abc\""},
		{"acme " + commit + " . ./...\n", "repos.txt:1: repository \"acme\""},
		{"a/b " + commit + " . ./...\n# x\na/b " + commit + " . ./...\n", "repos.txt:3: repository a/b listed twice"},
	} {
		_, err := realworld.ParseRepos("repos.txt", strings.NewReader(bad.in))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseRepos(%q) = %v, want an error containing %q", bad.in, err, bad.want)
		}
	}
}

func TestParseLabels_AlternativesAndErrorsWithPosition(t *testing.T) {
	t.Parallel()
	labels, err := realworld.ParseLabels("labels.tsv", strings.NewReader(
		row("acme/shop", "billing/pay.go", "Charge | Service.Charge | api/pay.go:Handler.Pay", "12", "ONCE001", "FLAG", "charge with no key")+
			row("acme/shop", "billing/pay.go", "Lookup", "30", "ONCE001", "NO-FLAG", "a GET")))
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 2 || !labels[0].Flag || labels[1].Flag ||
		strings.Join(labels[0].Funcs, ",") != "Charge,Service.Charge,api/pay.go:Handler.Pay" || labels[0].Line != 12 ||
		labels[0].Pos != "labels.tsv:1" {
		t.Fatalf("labels = %+v", labels)
	}
	want := []realworld.Place{{"billing/pay.go", "Charge"}, {"billing/pay.go", "Service.Charge"}, {"api/pay.go", "Handler.Pay"}}
	if got := labels[0].Places(); !slices.Equal(got, want) {
		t.Errorf("Places() = %v, want %v", got, want)
	}
	for _, bad := range []struct{ in, want string }{
		{row("acme/shop", "a.go", "F", "1", "ONCE001", "FLAG"), "labels.tsv:1: want 7"},
		{row("acme/shop", "a.go", "F", "x", "ONCE001", "FLAG", "r"), "line \"x\""},
		{row("acme/shop", "a.go", "F", "1", "ONCE01", "FLAG", "r"), "code \"ONCE01\""},
		{row("acme/shop", "a.go", "F", "1", "ONCE001", "MAYBE", "r"), "label \"MAYBE\""},
		{row("acme/shop", "a.go", "|", "1", "ONCE001", "FLAG", "r"), "empty function"},
		{row("acme/shop", "a.go", "F|b.go:", "1", "ONCE001", "FLAG", "r"), "alternative \"b.go:\""},
	} {
		_, err := realworld.ParseLabels("labels.tsv", strings.NewReader(bad.in))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseLabels(%q) = %v, want an error containing %q", bad.in, err, bad.want)
		}
	}
}

func TestParseVerdicts_RefusesTheSameFindingJudgedTwice(t *testing.T) {
	t.Parallel()
	in := row("acme/shop", "a.go", "F", "ONCE001", "-", "TP", "charge")
	_, err := realworld.ParseVerdicts("verdicts.tsv", strings.NewReader(in+in))
	if err == nil || !strings.Contains(err.Error(), "verdicts.tsv:2: same finding judged at verdicts.tsv:1") {
		t.Fatalf("err = %v", err)
	}
	_, err = realworld.ParseVerdicts("verdicts.tsv", strings.NewReader(row("acme/shop", "a.go", "F", "ONCE001", "-", "ok", "r")))
	if err == nil || !strings.Contains(err.Error(), "verdict \"ok\"") {
		t.Fatalf("err = %v", err)
	}
}

// A tree with two functions and a method, written to a temp dir so positions are real.
const shopSource = `package billing

// Charge charges.
func Charge() {
	post()
}

type Service struct{}

func (s *Service) Refund() {
	go func() {
		post()
	}()
}

var x = 1

func post() {}
`

func writeTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "billing"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "billing", "pay.go"), []byte(shopSource), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestEnclosingFunc_NamesFunctionsMethodsAndClosures(t *testing.T) {
	t.Parallel()
	root := writeTree(t)
	file := filepath.Join(root, "billing", "pay.go")
	idx := realworld.NewFuncIndex()
	for line, want := range map[int]string{3: "Charge", 5: "Charge", 12: "Service.Refund", 16: "-", 18: "post"} {
		got, err := idx.EnclosingFunc(file, line)
		if err != nil || got != want {
			t.Errorf("line %d: EnclosingFunc = %q, %v; want %q", line, got, err, want)
		}
	}
}

// oncelintJSON is the shape of oncelint -json: a package and its test variant report the
// same diagnostic, which must count once.
func oncelintJSON(root string) []byte {
	p := filepath.Join(root, "billing", "pay.go")
	d := `[{"category":"ONCE001","posn":"` + p + `:5:2","message":"call to post has no promise (ONCE001)"},
	       {"category":"ONCE001","posn":"` + p + `:12:3","message":"call to post has no promise (ONCE001)"}]`
	return []byte(`{"acme/shop/billing":{"once001":` + d + `,"once002":[]},
	"acme/shop/billing [acme/shop/billing.test]":{"once001":` + d + `}}`)
}

func TestParseJSON_OneFindingPerDiagnosticWithItsFunction(t *testing.T) {
	t.Parallel()
	root := writeTree(t)
	fs, err := realworld.ParseJSON("acme/shop", root, oncelintJSON(root), realworld.NewFuncIndex().EnclosingFunc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Key())
	}
	want := "acme/shop billing/pay.go Charge ONCE001|acme/shop billing/pay.go Service.Refund ONCE001"
	if strings.Join(got, "|") != want {
		t.Fatalf("findings = %q, want %q", strings.Join(got, "|"), want)
	}
	// A tree reached through a symbolic link: the tool prints the files' real names.
	link := filepath.Join(t.TempDir(), "acme+shop")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	fs, err = realworld.ParseJSON("acme/shop", link, oncelintJSON(root), realworld.NewFuncIndex().EnclosingFunc)
	if err != nil || len(fs) != 2 || fs[0].File != "billing/pay.go" {
		t.Fatalf("through a link: findings = %v, err = %v", fs, err)
	}
	_, err = realworld.ParseJSON("acme/shop", root, []byte(`{"p":{"once001":{"error":"boom"}}}`), realworld.NewFuncIndex().EnclosingFunc)
	if err == nil || !strings.Contains(err.Error(), "once001 on p: boom") {
		t.Fatalf("analyzer error: err = %v", err)
	}
}

// corpusDir writes a corpus's files, by name, into a new directory.
func corpusDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func corpus(t *testing.T, labels, verdicts string) *realworld.Corpus {
	t.Helper()
	c, err := realworld.Load(corpusDir(t, map[string]string{
		"repos.txt":    "acme/shop " + commit + " . ./...\nacme/mail " + commit + " . ./...\n",
		"labels.tsv":   labels,
		"verdicts.tsv": verdicts,
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func finding(repo, file, fn, code, msg string) realworld.Finding {
	return realworld.Finding{Repo: repo, File: file, Func: fn, Line: 1, Code: code, Message: msg}
}

func TestScore_PrecisionOverEveryFindingRecallOverFlagRows(t *testing.T) {
	t.Parallel()
	c := corpus(t,
		row("acme/shop", "pay.go", "Charge", "5", "ONCE001", "FLAG", "charge, no key")+
			row("acme/shop", "pay.go", "Invoice|Bill", "9", "ONCE001", "FLAG", "invoice item, no key")+
			row("acme/shop", "pay.go", "Lookup", "20", "ONCE001", "NO-FLAG", "a GET")+
			row("acme/mail", "send.go", "Welcome", "3", "ONCE001", "FLAG", "welcome email twice"),
		row("acme/shop", "pay.go", "Charge", "ONCE001", "-", "TP", "charge")+
			row("acme/shop", "pay.go", "Bill", "ONCE001", "-", "TP", "invoice item")+
			row("acme/shop", "pay.go", "Lookup", "ONCE001", "-", "FP", "a GET")+
			row("acme/shop", "pay.go", "Log", "ONCE001", "-", "FP", "a logger")+
			row("acme/shop", "pay.go", "Log", "ONCE001", "webhook", "TP", "the webhook post itself")+
			row("acme/mail", "send.go", "Gone", "ONCE001", "-", "TP", "no longer reported"))
	res := realworld.Score(c, []realworld.Finding{
		finding("acme/shop", "pay.go", "Charge", "ONCE001", "charge"),
		finding("acme/shop", "pay.go", "Bill", "ONCE001", "invoice"),     // the alternative function
		finding("acme/shop", "pay.go", "Lookup", "ONCE001", "get"),       // FP, and a NO-FLAG row flagged
		finding("acme/shop", "pay.go", "Log", "ONCE001", "a log line"),   // FP via the catch-all
		finding("acme/shop", "pay.go", "Log", "ONCE001", "webhook sent"), // TP via the longer match
		finding("acme/shop", "pay.go", "Charge", "ONCE002", "bad key"),   // no verdict
	}, nil)

	shop := *res.ByRepo["acme/shop"]
	if shop.Findings != 6 || shop.TP != 3 || shop.FP != 2 || shop.Unjudged != 1 || shop.Flag != 2 || shop.Found != 2 ||
		shop.NoFlag != 1 || shop.Flagged != 1 {
		t.Errorf("acme/shop = %+v", shop)
	}
	mail := *res.ByRepo["acme/mail"]
	if mail.Findings != 0 || mail.Flag != 1 || mail.Found != 0 {
		t.Errorf("acme/mail = %+v", mail)
	}
	if got := res.Total.Precision(); got != 0.5 { // 3 TP of 6: the unjudged one counts against
		t.Errorf("precision = %v, want 0.5", got)
	}
	if got := res.Total.Recall(); got != 2.0/3 {
		t.Errorf("recall = %v, want 2/3", got)
	}
	// Strict: the invoice row is found only at its second alternative.
	if got := res.Total.StrictRecall(); got != 1.0/3 {
		t.Errorf("strict recall = %v, want 1/3", got)
	}
	if res.OK() || len(res.Unjudged) != 1 || res.Unjudged[0].Code != "ONCE002" {
		t.Errorf("unjudged = %+v, OK = %v", res.Unjudged, res.OK())
	}
	if len(res.Missed) != 1 || res.Missed[0].Funcs[0] != "Welcome" {
		t.Errorf("missed = %+v", res.Missed)
	}
	if len(res.Flagged) != 1 || res.Flagged[0].Funcs[0] != "Lookup" {
		t.Errorf("flagged NO-FLAG = %+v", res.Flagged)
	}
	if len(res.Unused) != 1 || res.Unused[0].Func != "Gone" {
		t.Errorf("unused verdicts = %+v", res.Unused)
	}

	var out bytes.Buffer
	res.Write(&out)
	for _, want := range []string{
		"precision 0.50 (3 TP of 6 findings), recall 0.33 strict (1 of 3 FLAG rows at the place named first), 0.67 lenient (2 of 3 at any place named), 1 of 1 NO-FLAG rows flagged",
		"findings with no verdict",
		"acme/shop\tpay.go\tCharge\tONCE002\t-\t?\t?",
		"acme/mail send.go:3 Welcome ONCE001: welcome email twice",
		"acme/shop pay.go:20 Lookup ONCE001: a GET",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestScore_AllJudgedIsOKAndAFailedRepoIsNot(t *testing.T) {
	t.Parallel()
	c := corpus(t, row("acme/shop", "pay.go", "Charge", "5", "ONCE001", "FLAG", "charge"),
		row("acme/shop", "pay.go", "Charge", "ONCE001", "-", "TP", "charge"))
	res := realworld.Score(c, []realworld.Finding{finding("acme/shop", "pay.go", "Charge", "ONCE001", "m")}, nil)
	if !res.OK() || res.Total.Precision() != 1 || res.Total.Recall() != 1 {
		t.Fatalf("res = %+v", res.Total)
	}
	res = realworld.Score(c, nil, map[string]string{"acme/mail": "no tree"})
	if res.OK() || res.Total.Recall() != 0 {
		t.Fatalf("failed repo: OK = %v, total = %+v", res.OK(), res.Total)
	}
}

// A corpus before its first run has labels and no verdicts.tsv yet.
func TestLoad_WithoutVerdictsHasNone(t *testing.T) {
	t.Parallel()
	dir := corpusDir(t, map[string]string{
		"repos.txt":  "acme/shop " + commit + " . ./...\n",
		"labels.tsv": row("acme/shop", "a.go", "F", "1", "ONCE001", "FLAG", "r"),
	})
	c, err := realworld.Load(dir)
	if err != nil || len(c.Labels) != 1 || len(c.Verdicts) != 0 {
		t.Fatalf("Load = %+v, %v; want one label, no verdict", c, err)
	}
	if err := os.Remove(filepath.Join(dir, "labels.tsv")); err != nil {
		t.Fatal(err)
	}
	if _, err := realworld.Load(dir); err == nil || !strings.Contains(err.Error(), "labels.tsv") {
		t.Fatalf("Load without labels.tsv: err = %v", err)
	}
}

func TestLoad_RefusesAnUnknownRepository(t *testing.T) {
	t.Parallel()
	_, err := realworld.Load(corpusDir(t, map[string]string{
		"repos.txt":    "acme/shop " + commit + " . ./...\n",
		"labels.tsv":   row("acme/other", "a.go", "F", "1", "ONCE001", "FLAG", "r"),
		"verdicts.tsv": "",
	}))
	if err == nil || !strings.Contains(err.Error(), "labels.tsv:1: repository acme/other is not in repos.txt") {
		t.Fatalf("err = %v", err)
	}
}

// reusedRounds are blind rounds whose repositories were not new when they were labelled, so
// their numbers are regression figures and never a headline (each one's README says so).
var reusedRounds = map[string]string{
	"blind12": "its six repositories were already in the regression corpus, with labels of their own",
}

// TestBlindRounds_RepositoriesAreNewToTheProject holds the blind protocol to the corpus
// files: a blind round's repository appears in no earlier round and not in the regression
// corpus, so its first run is on code no rule was written from.
func TestBlindRounds_RepositoriesAreNewToTheProject(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "analyzer", "testdata", "realworld")
	dirs, err := filepath.Glob(filepath.Join(root, "blind*", "repos.txt"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no blind rounds under %s: %v", root, err)
	}
	round := func(path string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(path)), "blind"))
		if err != nil {
			t.Fatalf("%s: round directory not named blindN", path)
		}
		return n
	}
	slices.SortFunc(dirs, func(a, b string) int { return round(a) - round(b) })
	seen := map[string]string{} // repository → the corpus that first held it
	read := func(path string) []realworld.Repo {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		repos, err := realworld.ParseRepos(path, f)
		if err != nil {
			t.Fatal(err)
		}
		return repos
	}
	for _, r := range read(filepath.Join(root, "repos.txt")) {
		seen[r.Name] = "the regression corpus"
	}
	for _, path := range dirs {
		name := filepath.Base(filepath.Dir(path))
		var reused []string
		for _, r := range read(path) {
			if first, ok := seen[r.Name]; ok {
				reused = append(reused, r.Name+" (in "+first+")")
				continue
			}
			seen[r.Name] = name
		}
		switch _, known := reusedRounds[name]; {
		case len(reused) > 0 && !known:
			t.Errorf("%s is not blind: %s", name, strings.Join(reused, ", "))
		case len(reused) == 0 && known:
			t.Errorf("%s is listed as reused but all its repositories are new", name)
		}
	}
}

func TestUnplaced_NamesLabelsWhoseFileTheTreeLacks(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "pkg", "core"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pkg/core/alert.go", "pkg/services/incident.go"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tree, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, f), []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	labels, err := realworld.ParseLabels("labels.tsv", strings.NewReader(
		row("acme/alerts", "pkg/services/incident.go", "CreateIncident|core/alert.go:Alert.SendAll", "124", "ONCE001", "FLAG", "fan-out")+
			row("acme/alerts", "pkg/services/incident.go", "CreateIncident|pkg/core/alert.go:Alert.SendAll", "124", "ONCE001", "FLAG", "fan-out")+
			row("acme/other", "missing.go", "F", "1", "ONCE001", "FLAG", "another repository's")))
	if err != nil {
		t.Fatal(err)
	}
	c := &realworld.Corpus{Labels: labels}
	got := c.Unplaced(realworld.Repo{Name: "acme/alerts", Commit: commit}, tree)
	if len(got) != 1 || !strings.Contains(got[0], "labels.tsv:1") || !strings.Contains(got[0], "names core/alert.go") {
		t.Fatalf("Unplaced = %q, want the first row's core/alert.go alone", got)
	}
}
