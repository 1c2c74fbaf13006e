package once_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

// transactionControl matches a statement that begins or ends a transaction (not the BEGIN of a
// PL/pgSQL body, which ends a line without a semicolon).
var transactionControl = regexp.MustCompile(`(?im)^\s*(BEGIN|START TRANSACTION|COMMIT|END|ROLLBACK)\s*;`)

// The steps are numbered from 1 without gaps, each with an up and a down, and the first one
// adopts a database made before the schema had steps (every statement IF NOT EXISTS).
func TestSchemaSteps_NumberedWithUpAndDown(t *testing.T) {
	t.Parallel()
	steps := once.SchemaSteps()
	if len(steps) == 0 || once.LatestSchemaStep() != len(steps) {
		t.Fatalf("%d steps, latest %d", len(steps), once.LatestSchemaStep())
	}
	for i, s := range steps {
		if s.Number != i+1 || s.Name == "" || s.Up == "" || s.Down == "" {
			t.Errorf("step %d: %+v", i+1, s)
		}
		if transactionControl.MatchString(s.Up) {
			t.Errorf("step %d holds transaction control: Migrate and oncegen add it", s.Number)
		}
	}
	if once.Schema == "" || !strings.Contains(once.Schema, steps[0].Up) {
		t.Error("Schema is not the steps' up parts")
	}
}

// Migrate applies every step once and records each; Verify and AppliedSchemaStep read the
// same step back; a database behind the runtime is named as behind, with its step.
func TestVerify_ReportsTheSchemaStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 2)

	at, err := once.AppliedSchemaStep(ctx, pool)
	if err != nil || at != 0 {
		t.Fatalf("an empty database: step %d, %v; want 0", at, err)
	}
	ps := problems(t, once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...))
	if !slices.ContainsFunc(ps, func(p once.Problem) bool { return p.Fault == once.FaultBehind && p.Live == "0" }) {
		t.Fatalf("Verify on an empty database: %v, want the step behind at 0", ps)
	}

	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	at, err = once.AppliedSchemaStep(ctx, pool)
	if err != nil || at != once.LatestSchemaStep() {
		t.Fatalf("after Migrate: step %d, %v; want %d", at, err, once.LatestSchemaStep())
	}
	var recorded []int
	rows, err := pool.Query(ctx, "SELECT step FROM once.schema_steps ORDER BY step")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, n)
	}
	if len(recorded) != once.LatestSchemaStep() || recorded[len(recorded)-1] != once.LatestSchemaStep() {
		t.Fatalf("recorded steps %v, want 1..%d", recorded, once.LatestSchemaStep())
	}
	if err := once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...); err != nil {
		t.Fatalf("Verify after Migrate: %v", err)
	}

	// The last step taken back by its own down, which also takes back its record: Verify
	// says the database is behind, at the step before, and Migrate brings it back.
	latest := once.LatestSchemaStep()
	steps := once.SchemaSteps()
	exec(t, pool, steps[len(steps)-1].Down)
	exec(t, pool, "DELETE FROM once.schema_steps WHERE step = "+strconv.Itoa(latest))
	err = once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...)
	ps = problems(t, err)
	want := "behind: once's tables are at schema step " + strconv.Itoa(latest-1) + ", this runtime needs step " + strconv.Itoa(latest)
	// The objects the step made are reported missing too; the step behind must be among them.
	behind := func(p once.Problem) bool { return p.Fault == once.FaultBehind }
	if !slices.ContainsFunc(ps, behind) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Verify with the last step taken back: %v\nwant a problem saying %q", err, want)
	}
	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...); err != nil {
		t.Fatalf("Verify after migrating again: %v", err)
	}
}

// A database made before the schema had steps holds the tables, with rows, and no
// once.schema_steps: Migrate adopts it, keeping every row, and records the steps.
func TestMigrate_AdoptsADatabaseMadeBeforeSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 2)
	exec(t, pool, once.SchemaSteps()[0].Up)
	exec(t, pool, "DROP TABLE once.schema_steps")
	exec(t, pool, "INSERT INTO once.operations (name, key, token, state, settled_at) VALUES ('app.Charge', 'k1', 't', 'done', now())")
	exec(t, pool, "INSERT INTO once.latches (name, key, fired_at, firings) VALUES ('app.Alert', 'r1', now(), 1)")
	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var ops, latched int
	if err := pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM once.operations WHERE state = 'done'), (SELECT count(*) FROM once.latches WHERE fired_at IS NOT NULL)").Scan(&ops, &latched); err != nil {
		t.Fatal(err)
	}
	if ops != 1 || latched != 1 {
		t.Errorf("after adopting: %d done operations, %d fired latches; want 1 and 1", ops, latched)
	}
	if err := once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...); err != nil {
		t.Fatalf("Verify after adopting: %v", err)
	}
}

// Instances starting at once all migrate one database: none fails, and each step is
// recorded once.
func TestMigrate_ConcurrentCallersApplyEachStepOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 8)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- once.Migrate(ctx, pool) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	var n, distinct int
	if err := pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT step) FROM once.schema_steps").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != once.LatestSchemaStep() || distinct != n {
		t.Errorf("%d step records (%d distinct), want %d", n, distinct, once.LatestSchemaStep())
	}
}

// A step mended after its release keeps each text it had (schema/superseded), oldest first,
// each other than its Up; only step 11 has been mended.
func TestSchemaSteps_SupersededTexts(t *testing.T) {
	for _, s := range once.SchemaSteps() {
		want := map[int]int{11: 1}[s.Number]
		if len(s.Superseded) != want {
			t.Errorf("step %d (%s): %d superseded texts, want %d", s.Number, s.Name, len(s.Superseded), want)
		}
		for i, up := range s.Superseded {
			if up == s.Up || strings.TrimSpace(up) == "" {
				t.Errorf("step %d: superseded text %d is its Up, or empty", s.Number, i+1)
			}
		}
	}
}
