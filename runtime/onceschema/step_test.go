package onceschema_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceschema"
)

// transactionControl matches a statement that begins or ends a transaction (not the BEGIN of a
// PL/pgSQL body, which ends a line without a semicolon).
var transactionControl = regexp.MustCompile(`(?im)^\s*(BEGIN|START TRANSACTION|COMMIT|END|ROLLBACK)\s*;`)

// The steps are numbered from 1 without gaps, each with an up and a down and no transaction
// control of its own.
func TestSchemaSteps_NumberedWithUpAndDown(t *testing.T) {
	t.Parallel()
	steps := onceschema.Steps()
	if len(steps) == 0 || onceschema.LatestStep() != len(steps) {
		t.Fatalf("%d steps, latest %d", len(steps), onceschema.LatestStep())
	}
	for i, s := range steps {
		if s.Number != i+1 || s.Name == "" || s.Up == "" || s.Down == "" {
			t.Errorf("step %d: %+v", i+1, s)
		}
		if transactionControl.MatchString(s.Up) {
			t.Errorf("step %d holds transaction control: Migrate and oncegen add it", s.Number)
		}
	}
}

// Migrate applies every step once and records each; Verify and AppliedSchemaStep read the
// same step back; a database behind the runtime is named as behind, with its step.
func TestVerify_ReportsTheSchemaStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 2)

	at, err := onceschema.AppliedStep(ctx, pool)
	if err != nil || at != 0 {
		t.Fatalf("an empty database: step %d, %v; want 0", at, err)
	}
	ps := problems(t, onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...))
	if !slices.ContainsFunc(ps, func(p onceschema.Problem) bool { return p.Fault == onceschema.FaultBehind && p.Live == "0" }) {
		t.Fatalf("Verify on an empty database: %v, want the step behind at 0", ps)
	}

	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	at, err = onceschema.AppliedStep(ctx, pool)
	if err != nil || at != onceschema.LatestStep() {
		t.Fatalf("after Migrate: step %d, %v; want %d", at, err, onceschema.LatestStep())
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
	if len(recorded) != onceschema.LatestStep() || recorded[len(recorded)-1] != onceschema.LatestStep() {
		t.Fatalf("recorded steps %v, want 1..%d", recorded, onceschema.LatestStep())
	}
	if err := onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...); err != nil {
		t.Fatalf("Verify after Migrate: %v", err)
	}

	// The last step taken back by its own down (which keeps the tables and their rows) and
	// its record: Verify says the database is behind, at the step before, and Migrate
	// applies the step again over the tables it kept.
	latest := onceschema.LatestStep()
	steps := onceschema.Steps()
	exec(t, pool, steps[len(steps)-1].Down)
	exec(t, pool, "DELETE FROM once.schema_steps WHERE step = "+strconv.Itoa(latest))
	err = onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...)
	ps = problems(t, err)
	want := "behind: once's tables are at schema step " + strconv.Itoa(latest-1) + ", this runtime needs step " + strconv.Itoa(latest)
	behind := func(p onceschema.Problem) bool { return p.Fault == onceschema.FaultBehind }
	if !slices.ContainsFunc(ps, behind) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Verify with the last step taken back: %v\nwant a problem saying %q", err, want)
	}
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := onceschema.VerifyRequirements(ctx, pool, onceschema.RuntimeRequirements()...); err != nil {
		t.Fatalf("Verify after migrating again: %v", err)
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
		wg.Go(func() { errs <- onceschema.Migrate(ctx, pool) })
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
	if n != onceschema.LatestStep() || distinct != n {
		t.Errorf("%d step records (%d distinct), want %d", n, distinct, onceschema.LatestStep())
	}
}
