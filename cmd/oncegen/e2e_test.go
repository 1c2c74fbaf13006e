package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

type stormResult struct {
	Effects    int64  `json:"effects"`
	Ran        int64  `json:"ran"`
	Errors     int64  `json:"errors"`
	Redirected int64  `json:"redirected"`
	FirstError string `json:"first_error"`
}

// stormCallers is how many calls the storm program fires at once per kind.
const stormCallers = 16

var stormKinds = []string{"request", "transaction", "statement", "episode", "open", "forever", "provider", "lease",
	"table-open", "table-forever", "table-episode", "table-statement"}

// For every kind, the wrappers oncegen generates into a fresh module, built there and run
// against real PostgreSQL with the migrations it wrote, keep a storm of concurrent calls on
// one key to exactly one effect; the same storm without the guards makes duplicates.
func TestGeneratedWrappers_StormOfDuplicatesMakesExactlyOneEffect(t *testing.T) {
	t.Parallel()
	mod, storm := buildStorm(t)

	guarded := setupDatabase(t, mod)
	got := runStorm(t, storm, guarded.URL)
	for _, kind := range stormKinds {
		r, ok := got[kind]
		switch {
		case !ok:
			t.Errorf("%s: no result", kind)
		case r.Errors != 0:
			t.Errorf("%s: %d calls failed, first: %s", kind, r.Errors, r.FirstError)
		case r.Effects != 1:
			t.Errorf("%s: %d effects from %d concurrent calls, want exactly 1", kind, r.Effects, stormCallers)
		case kind != "provider" && kind != "transaction" && r.Ran != 1:
			// Provider and transaction guards run every call: the provider keeps the promise
			// by its key; the transaction serialises the decisions, so only the first finds
			// nothing decided.
			t.Errorf("%s: %d calls report Ran, want 1", kind, r.Ran)
		case (kind == "open" || kind == "table-open") && r.Redirected != stormCallers-1:
			// The winner holds its work open until the others return: each is sent to it.
			t.Errorf("%s: %d calls redirected to the open work with its handle, want %d", kind, r.Redirected, stormCallers-1)
		}
	}

	// Negative control: the same storm, calling the functions without their guards, on a
	// database without the unique indexes.
	control := setupDatabase(t, mod)
	dropped := []string{"jobs_dedupe_key_once_open", "billing.charges_org_id_day_once_forever", "alerts_rule_id_once_episode", "quota_org_id_day_once_statement"}
	for _, idx := range dropped {
		if out, err := psqlCommand(control.URL, "DROP INDEX "+idx); err != nil {
			t.Fatalf("dropping %s: %v\n%s", idx, err, out)
		}
	}
	// With its guards, the program refuses to start there: once.Verify, at its start-up,
	// finds each index the generated code registered missing.
	out, err := exec.Command(storm, "-db", control.URL).CombinedOutput()
	if err == nil {
		t.Fatalf("the guarded storm ran on a database without the unique indexes:\n%s", out)
	}
	for _, idx := range dropped {
		name := idx
		if _, n, qualified := strings.Cut(idx, "."); qualified {
			name = n
		}
		if !strings.Contains(string(out), "missing: index "+name+" on ") {
			t.Errorf("once.Verify at start-up does not name the dropped index %s:\n%s", idx, out)
		}
	}
	unguarded := runStorm(t, storm, control.URL, "-direct")
	for _, kind := range stormKinds {
		if r := unguarded[kind]; r.Effects < 2 {
			t.Errorf("control %s: %d effects without the guard: the storm cannot show a duplicate", kind, r.Effects)
		}
	}
}

// The statement form's first insert of a key meets no conflict clause: the cap check
// oncegen emits compares it with the cap, and the generated wrapper reports the violation as
// a refusal, with nothing written. Without that check, once.Verify stops the program at
// start-up.
func TestGeneratedWrappers_StatementFirstInsertOverTheCapIsRefused(t *testing.T) {
	t.Parallel()
	mod, storm := buildStorm(t)
	db := setupDatabase(t, mod)
	first := func(n string) (status string, used int64) {
		t.Helper()
		out, err := exec.Command(storm, "-db", db.URL, "-first", n).Output()
		if err != nil {
			t.Fatalf("storm -first %s: %v\n%s", n, err, out)
		}
		var res struct {
			Status, Error string
			Used          int64
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("storm output %q: %v", out, err)
		}
		if res.Error != "" {
			t.Fatalf("storm -first %s: the call failed: %s", n, res.Error)
		}
		return res.Status, res.Used
	}
	// UseQuota's cap is 100.
	if status, used := first("101"); status != "refused" || used != 0 {
		t.Errorf("a first insert of 101 units: %s, %d units held: want refused, 0", status, used)
	}
	if status, used := first("100"); status != "ran" || used != 100 {
		t.Errorf("a first insert of the whole cap: %s, %d units held: want ran, 100", status, used)
	}
	if out, err := psqlCommand(db.URL, "ALTER TABLE quota DROP CONSTRAINT quota_used_once_cap"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	out, err := exec.Command(storm, "-db", db.URL, "-first", "101").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "missing: check quota_used_once_cap on public.quota\n  relied on by: app.UseQuota") {
		t.Errorf("without the cap check: %v\n%s: want once.Verify to stop the program, naming the check", err, out)
	}
}

// buildStorm copies testdata/e2e into a fresh module, runs oncegen there (wrappers and
// plain SQL migrations), and builds the storm program against the generated code.
func buildStorm(t *testing.T) (mod, storm string) {
	t.Helper()
	mod = newModule(t, copyTree(t, "testdata/e2e", ""))
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations", "-format", "sql", "./..."); code != 0 {
		t.Fatalf("oncegen exit %d:\n%s", code, stderr)
	}
	storm = filepath.Join(t.TempDir(), "storm")
	if out, err := goCmd(mod, "build", "-o", storm, "./storm").CombinedOutput(); err != nil {
		t.Fatalf("building the generated module: %v\n%s", err, out)
	}
	return mod, storm
}

// setupDatabase makes a fresh database holding the module's own tables and every up
// migration oncegen wrote, applied with psql.
func setupDatabase(t *testing.T, mod string) *pgtest.Database {
	t.Helper()
	db := pgtest.NewDatabase(t)
	if out, err := psql(db.URL, filepath.Join(mod, "schema.sql")); err != nil {
		t.Fatalf("schema.sql: %v\n%s", err, out)
	}
	ups := filesWith(t, filepath.Join(mod, "migrations"), ".up.sql")
	if len(ups) == 0 {
		t.Fatal("oncegen wrote no migrations")
	}
	for _, f := range ups {
		if out, err := psql(db.URL, f); err != nil {
			t.Fatalf("%s: %v\n%s", filepath.Base(f), err, out)
		}
	}
	return db
}

func runStorm(t *testing.T, bin, url string, args ...string) map[string]stormResult {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"-db", url}, args...)...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("storm %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	var res map[string]stormResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("storm output %q: %v", out, err)
	}
	t.Logf("storm %v: %s", args, out)
	return res
}

// oncegen verify and once.Verify (run by the generated program, from the requirements its
// generated code registered) read the same database alike: both pass on the migrations
// oncegen wrote, and both name the same objects once some are dropped, the runtime's own
// among them.
func TestVerify_AgreesWithOnceVerify(t *testing.T) {
	t.Parallel()
	mod, storm := buildStorm(t)
	db := setupDatabase(t, mod)
	if ups := filesWith(t, filepath.Join(mod, "migrations"), ".up.sql"); len(filesNamed(ups, "_once_schema_")) != 1 {
		t.Fatalf("oncegen wrote %d runtime schema files for a new database, want 1: %v", len(filesNamed(ups, "_once_schema_")), names(ups))
	}
	compare := func(stage string, want ...string) {
		t.Helper()
		code, stdout, stderr := oncegen(t, mod, "verify", "-db", db.URL, "./...")
		var fromOncegen []string
		for _, l := range strings.SplitAfter(stdout, "\n") {
			if l != "" && !strings.HasPrefix(l, "oncegen verify: ") {
				fromOncegen = append(fromOncegen, l)
			}
		}
		out, err := exec.Command(storm, "-db", db.URL, "-verify").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: once.Verify: %v\n%s", stage, err, out)
		}
		fromRuntime := strings.SplitAfter(string(out), "\n")
		if fromRuntime[len(fromRuntime)-1] == "" {
			fromRuntime = fromRuntime[:len(fromRuntime)-1]
		}
		if (code == 0) != (len(want) == 0) {
			t.Errorf("%s: oncegen verify exit %d\n%s%s", stage, code, stdout, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: oncegen verify does not name %q\n%s", stage, w, stdout)
			}
		}
		if strings.Join(fromOncegen, "") != strings.Join(fromRuntime, "") {
			t.Errorf("%s: oncegen verify and once.Verify disagree\noncegen verify:\n%s\nonce.Verify:\n%s", stage, strings.Join(fromOncegen, ""), out)
		}
	}
	compare("after the migrations")
	for _, drop := range []string{"DROP INDEX jobs_dedupe_key_once_open", "DROP INDEX once.operations_uncertain", "DROP TABLE once.audit"} {
		if out, err := psqlCommand(db.URL, drop); err != nil {
			t.Fatalf("%s: %v\n%s", drop, err, out)
		}
	}
	compare("after dropping an index of the app's, one of the runtime's and a runtime table",
		"missing: index jobs_dedupe_key_once_open on public.jobs", "missing: index operations_uncertain on once.operations", "missing: table once.audit")
}

// filesNamed is those of paths whose base name holds part.
func filesNamed(paths []string, part string) []string {
	var out []string
	for _, p := range paths {
		if strings.Contains(filepath.Base(p), part) {
			out = append(out, p)
		}
	}
	return out
}

// Wrappers generated from result= and seal= keep a secret result out of once.operations
// and replay what the docs say: a sealed intent whole, a redacted one without its secret,
// a digest's and nothing's as the zero value. The plain guard's row holds the secret: the
// control that shows the SQL assertion finds it where it is.
func TestGeneratedWrappers_ResultsAtRest(t *testing.T) {
	t.Parallel()
	mod, storm := buildStorm(t)
	db := setupDatabase(t, mod)
	out, err := exec.Command(storm, "-db", db.URL, "-results", "o-42").Output()
	if err != nil {
		t.Fatalf("storm -results: %v\n%s", err, out)
	}
	type intent struct {
		ID           string `json:"id"`
		ClientSecret string `json:"client_secret"`
	}
	var got map[string][]struct {
		Status string
		Intent intent
		Error  string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("storm output %q: %v", out, err)
	}
	const secret = "pi_o-42_secret_e2e"
	whole := intent{ID: "pi_o-42", ClientSecret: secret}
	replayed := map[string]intent{"plain": whole, "sealed": whole, "redacted": {ID: "pi_o-42"}, "digest": {}, "none": {}}
	forms := map[string]string{"plain": "", "sealed": "sealed", "redacted": "sealed", "digest": "digest", "none": "none"}
	for form, want := range replayed {
		calls := got[form]
		if len(calls) != 2 || calls[0].Status != "ran" || calls[0].Intent != whole || calls[0].Error != "" {
			t.Errorf("%s: first call %+v; want ran with the whole intent", form, calls)
			continue
		}
		if calls[1].Status != "duplicate" || calls[1].Intent != want || calls[1].Error != "" {
			t.Errorf("%s: duplicate %+v; want duplicate with %+v", form, calls[1], want)
		}
		name := "app.CreateIntent" + strings.ToUpper(form[:1]) + form[1:]
		row, err := psqlCommand(db.URL, fmt.Sprintf(`SELECT coalesce(result_form, ''), (row_to_json(operations)::text LIKE '%%%s%%')
FROM once.operations WHERE name = '%s'`, secret, name))
		if err != nil {
			t.Fatalf("%s: %v\n%s", form, err, row)
		}
		wantRow := forms[form] + "|" + map[bool]string{true: "t", false: "f"}[form == "plain"]
		if strings.TrimSpace(string(row)) != wantRow {
			t.Errorf("%s: the row holds form|secret %q, want %q", form, strings.TrimSpace(string(row)), wantRow)
		}
	}
	effects, err := psqlCommand(db.URL, `SELECT count(*) FROM effects WHERE kind LIKE 'intent-%'`)
	if err != nil || strings.TrimSpace(string(effects)) != "5" {
		t.Errorf("%s effects (%v), want 5: one per guard", effects, err)
	}
}
