package onceschema_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/generator"
	"github.com/oncekit/once/internal/directive"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

// verifyGuards are one guard of each table= form, as oncegen sees them.
var verifyGuards = []*generator.Guard{
	{Directive: &directive.Directive{Name: "app.Enqueue", Kind: directive.Open, Table: "jobs", Columns: []string{"dedupe_key"}, Status: "status", OpenValues: []string{"pending", "running"}}},
	{Directive: &directive.Directive{Name: "app.UseQuota", Kind: directive.Statement, Table: "quota", Columns: []string{"org_id", "day"}, Counter: "used", Cap: directive.IntOrExpr{IsLit: true, Lit: 100}}},
	{Directive: &directive.Directive{Name: "app.FireAlert", Kind: directive.Episode, Table: "alerts", Columns: []string{"rule_id"}, Latch: "fired_at"}},
	{Directive: &directive.Directive{Name: "app.Charge", Kind: directive.Forever, Table: "billing.charges", Columns: []string{"org_id", "day"}, NullsNotDistinct: true}},
}

// setupVerify is a database migrated as an application's would be: the runtime's schema,
// the application's own tables, then every object oncegen emits for verifyGuards, applied
// as emitted. It returns the requirements oncegen derives from the same objects (the
// runtime's own among them), which a generated file registers.
func setupVerify(t *testing.T) (*pgxpool.Pool, []onceschema.Requirement) {
	t.Helper()
	pool := setup(t, 4)
	objs, err := generator.Objects(verifyGuards)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{
		`CREATE TABLE jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, dedupe_key text NOT NULL, status text NOT NULL)`,
		`CREATE TABLE quota (org_id bigint NOT NULL, day text NOT NULL)`,
		`CREATE TABLE alerts (rule_id text NOT NULL)`,
		`CREATE SCHEMA billing`,
		`CREATE TABLE billing.charges (org_id bigint, day text)`,
	}
	for _, o := range objs {
		if o.Kind != generator.ObjRuntime { // applied by setup, with onceschema.Migrate
			stmts = append(stmts, o.Up)
		}
	}
	for _, o := range objs { // a CHECK added NOT VALID is validated in a later file
		if o.Validate != "" {
			stmts = append(stmts, o.Validate)
		}
	}
	for _, s := range stmts {
		exec(t, pool, s)
	}
	return pool, generator.Requirements(objs)
}

func exec(t *testing.T, db onceschema.DB, sql string) {
	t.Helper()
	if _, err := db.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// problems returns what VerifyRequirements found, failing the test unless it is a
// *SchemaError that errors.Is reports as ErrSchema.
func problems(t *testing.T, err error) []onceschema.Problem {
	t.Helper()
	var se *onceschema.Error
	if !errors.Is(err, onceschema.ErrSchema) || !errors.As(err, &se) {
		t.Fatalf("err %v: want a *SchemaError, ErrSchema", err)
	}
	return se.Problems
}

func TestVerify_MigratedDatabasePasses(t *testing.T) {
	t.Parallel()
	pool, reqs := setupVerify(t)
	if len(reqs) <= len(onceschema.RuntimeRequirements()) {
		t.Fatalf("%d requirements: the guards' own are missing", len(reqs))
	}
	if err := onceschema.VerifyRequirements(context.Background(), pool, reqs...); err != nil {
		t.Fatalf("a database migrated as emitted: %v", err)
	}
}

// The runtime's requirements are every table and index Schema creates, in the words the
// catalog uses: none is left out, none is extra, none differs.
func TestVerify_SchemaRequirementsAreWhatSchemaCreates(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	if err := onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...); err != nil {
		t.Fatalf("a migrated database: %v", err)
	}
	var listed []string
	for _, r := range onceschema.RuntimeRequirements() {
		if r.Kind == onceschema.StepObject {
			continue // not a catalog object: see TestVerify_ReportsTheSchemaStep
		}
		listed = append(listed, string(r.Kind)+" "+r.Table+" "+r.Name)
	}
	rows, err := pool.Query(ctx, `SELECT 'table once.' || relname || ' ' FROM pg_class
WHERE relnamespace = 'once'::regnamespace AND relkind = 'r'
UNION ALL
SELECT 'index once.' || tablename || ' ' || indexname FROM pg_indexes WHERE schemaname = 'once'
UNION ALL
SELECT 'trigger once.' || c.relname || ' ' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = 'once'::regnamespace AND NOT t.tgisinternal`)
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		live = append(live, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	slices.Sort(live)
	if !slices.Equal(listed, live) {
		t.Errorf("SchemaRequirements lists\n  %s\nSchema creates\n  %s\n(add what is new to verify_schema.go, in pg_get_indexdef's words)",
			strings.Join(listed, "\n  "), strings.Join(live, "\n  "))
	}
}

// A Statement key's full mark is true only while every delete of its slots clears it: the
// trigger that does is required like an index, disabled is INVALID, dropped is missing.
func TestVerify_RuntimeTriggerDisabledOrDroppedFails(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	exec(t, pool, "ALTER TABLE once.counter_slots DISABLE TRIGGER counter_slots_given_back")
	err := onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...)
	ps := problems(t, err)
	if len(ps) != 1 || ps[0].Fault != onceschema.FaultInvalid || ps[0].Requirement.Name != "counter_slots_given_back" {
		t.Fatalf("disabled: problems %+v; want the trigger, invalid", ps)
	}
	if !strings.Contains(err.Error(), "INVALID: trigger counter_slots_given_back on once.counter_slots (disabled") {
		t.Errorf("error %q does not call the trigger disabled", err)
	}
	exec(t, pool, "DROP TRIGGER counter_slots_given_back ON once.counter_slots")
	ps = problems(t, onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...))
	if len(ps) != 1 || ps[0].Fault != onceschema.FaultMissing || ps[0].Requirement.Name != "counter_slots_given_back" {
		t.Fatalf("dropped: problems %+v; want the trigger, missing", ps)
	}
}

func TestVerify_DroppedIndexFailsNamingIt(t *testing.T) {
	t.Parallel()
	pool, reqs := setupVerify(t)
	exec(t, pool, "DROP INDEX jobs_dedupe_key_once_open")
	err := onceschema.VerifyRequirements(context.Background(), pool, reqs...)
	ps := problems(t, err)
	if len(ps) != 1 || ps[0].Fault != onceschema.FaultMissing || ps[0].Requirement.Name != "jobs_dedupe_key_once_open" {
		t.Fatalf("problems %+v: want the dropped index, missing", ps)
	}
	want := "missing: index jobs_dedupe_key_once_open on public.jobs\n  relied on by: app.Enqueue"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// A concurrent unique build over duplicate rows fails and leaves its index behind, INVALID:
// it exists, so IF NOT EXISTS would take it for a good one, and it enforces nothing.
func TestVerify_InvalidIndexFailsNamingItInvalid(t *testing.T) {
	t.Parallel()
	pool, reqs := setupVerify(t)
	ctx := context.Background()
	exec(t, pool, "DROP INDEX jobs_dedupe_key_once_open")
	exec(t, pool, "INSERT INTO jobs (dedupe_key, status) VALUES ('k', 'pending'), ('k', 'running')")
	build := verifyGuards[0].IndexDef()
	build = strings.Replace(build, "CREATE UNIQUE INDEX ", "CREATE UNIQUE INDEX CONCURRENTLY ", 1)
	if _, err := pool.Exec(ctx, build); err == nil {
		t.Fatal("the unique index built over duplicate rows")
	}
	err := onceschema.VerifyRequirements(ctx, pool, reqs...)
	ps := problems(t, err)
	if len(ps) != 1 || ps[0].Fault != onceschema.FaultInvalid || ps[0].Requirement.Name != "jobs_dedupe_key_once_open" {
		t.Fatalf("problems %+v: want the index, invalid", ps)
	}
	if !strings.Contains(err.Error(), "INVALID: index jobs_dedupe_key_once_open on public.jobs") {
		t.Errorf("error %q does not call the index INVALID", err)
	}
	// The likeliest cause, duplicates, cannot be mended by applying the file again: the
	// hint sends the operator to the query in the migration's comment first.
	if !strings.Contains(err.Error(), "resolve those duplicates first — the query that lists them is in the comment of its migration — then DROP INDEX CONCURRENTLY it") {
		t.Errorf("error %q does not say to resolve the duplicates before dropping the index", err)
	}
	// The INVALID index enforces nothing: a third row with the key goes in.
	exec(t, pool, "INSERT INTO jobs (dedupe_key, status) VALUES ('k', 'pending')")
}

// An index of the right name with another predicate is not the index the conflict clause
// was generated for: with it, the clause fails (42P10) or guards other rows.
func TestVerify_IndexInAnotherFormFails(t *testing.T) {
	t.Parallel()
	pool, reqs := setupVerify(t)
	exec(t, pool, "DROP INDEX jobs_dedupe_key_once_open")
	exec(t, pool, "CREATE UNIQUE INDEX jobs_dedupe_key_once_open ON jobs (dedupe_key) WHERE status = 'pending'")
	err := onceschema.VerifyRequirements(context.Background(), pool, reqs...)
	ps := problems(t, err)
	if len(ps) != 1 || ps[0].Fault != onceschema.FaultDiffers || ps[0].Requirement.Name != "jobs_dedupe_key_once_open" {
		t.Fatalf("problems %+v: want the index, in another form", ps)
	}
	want := "differs: index jobs_dedupe_key_once_open on public.jobs\n" +
		"  want: CREATE UNIQUE INDEX jobs_dedupe_key_once_open ON public.jobs USING btree (dedupe_key) WHERE (status = ANY (ARRAY['pending'::text, 'running'::text]))\n" +
		"  have: CREATE UNIQUE INDEX jobs_dedupe_key_once_open ON public.jobs USING btree (dedupe_key) WHERE (status = 'pending'::text)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say\n%s", err, want)
	}
}

// One error names every problem: the runtime's own and the guards', of every kind.
func TestVerify_NamesEveryProblemInOneError(t *testing.T) {
	t.Parallel()
	pool, reqs := setupVerify(t)
	for _, s := range []string{
		"DROP INDEX once.open_claims_name_key_once_open",
		"DROP TABLE once.leases",
		"ALTER TABLE quota ALTER COLUMN used TYPE integer",
		"ALTER TABLE quota DROP CONSTRAINT quota_used_once_cap",
		"ALTER TABLE quota ADD CONSTRAINT quota_used_once_cap CHECK (used <= 100) NOT VALID",
		"ALTER TABLE alerts DROP COLUMN fired_at",
		"DROP INDEX billing.charges_org_id_day_once_forever",
	} {
		exec(t, pool, s)
	}
	err := onceschema.VerifyRequirements(context.Background(), pool, reqs...)
	var got []string
	for _, p := range problems(t, err) {
		got = append(got, string(p.Fault)+" "+p.Requirement.Name+" "+p.Requirement.Table)
	}
	want := []string{
		"missing  once.leases",
		"missing leases_pkey once.leases",
		"missing open_claims_name_key_once_open once.open_claims",
		"differs used public.quota",
		"invalid quota_used_once_cap public.quota",
		"missing fired_at public.alerts",
		"missing charges_org_id_day_once_forever billing.charges",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for _, s := range []string{"missing: table once.leases", "differs: column used on public.quota\n  want: bigint\n  have: integer",
		"INVALID: check quota_used_once_cap on public.quota", "relied on by: app.Charge"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not say %q:\n%v", s, err)
		}
	}
}

func TestVerify_BadInputIsRefusedBeforeAnyQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if err := onceschema.VerifyRequirements(ctx, nil); !errors.Is(err, once.ErrInvalid) {
		t.Errorf("nil DB: %v, want ErrInvalid", err)
	}
	// A pool on a closed database: any query would fail, so ErrInvalid proves none ran.
	pool := setup(t, 1)
	pool.Close()
	for name, r := range map[string]onceschema.Requirement{
		"unqualified table":  {Kind: onceschema.IndexObject, Table: "jobs", Name: "jobs_pkey"},
		"unknown kind":       {Kind: "rule", Table: "public.jobs", Name: "t"},
		"index without name": {Kind: onceschema.IndexObject, Table: "public.jobs"},
		"named table":        {Kind: onceschema.TableObject, Table: "public.jobs", Name: "jobs"},
	} {
		if err := onceschema.VerifyRequirements(ctx, pool, r); !errors.Is(err, once.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if err := onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...); err == nil || errors.Is(err, onceschema.ErrSchema) || errors.Is(err, once.ErrInvalid) {
		t.Errorf("a closed pool: %v, want the error of the check itself", err)
	}
}

// Verify checks the runtime's schema and what generated code registered with Require: the
// database/sql-driver way, so linking a package is enough. This is the only test that calls
// Require or Verify: the registry is the test binary's.
func TestVerify_ChecksWhatRequireRegistered(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	index := onceschema.Requirement{Kind: onceschema.IndexObject, Table: "public.invoices", Name: "invoices_number_once_forever",
		Def: "CREATE UNIQUE INDEX invoices_number_once_forever ON public.invoices USING btree (number)", Guards: []string{"billing.Issue"}}
	// Two packages relying on one index, and one registering twice: it is checked once.
	onceschema.Require(index)
	other := index
	other.Guards = []string{"refunds.Issue", "billing.Issue"}
	onceschema.Require(other)
	if got := onceschema.Requirements(); len(got) != 1 || !slices.Equal(got[0].Guards, []string{"billing.Issue", "refunds.Issue"}) {
		t.Fatalf("Requirements() = %+v: want the index once, relied on by both", got)
	}

	err := onceschema.Verify(ctx, pool)
	ps := problems(t, err)
	if len(ps) != 1 || ps[0].Fault != onceschema.FaultMissing || !strings.Contains(err.Error(), "relied on by: billing.Issue, refunds.Issue") {
		t.Fatalf("Verify before the index exists: %v", err)
	}
	exec(t, pool, "CREATE TABLE invoices (number text NOT NULL)")
	exec(t, pool, index.Def)
	if err := onceschema.Verify(ctx, pool); err != nil {
		t.Fatalf("Verify with the index: %v", err)
	}
	// once.Verify is the same check, from the package a program already imports.
	if err := once.Verify(ctx, pool); err != nil {
		t.Fatalf("once.Verify with the index: %v", err)
	}
	exec(t, pool, "ALTER TABLE once.latches DROP CONSTRAINT latches_pkey")
	if err := once.Verify(ctx, pool); !strings.Contains(fmtErr(err), "missing: index latches_pkey on once.latches") {
		t.Fatalf("once.Verify without the runtime's latches key: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
