package once_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

// The steps that move once.operations.state to the row's end, by name.
const (
	stateCopyStep   = "operations_state_copy"
	stateCopiedStep = "operations_state_copied"
	stateLastStep   = "operations_state_last"
)

// schemaStep returns the step of the runtime's schema called name.
func schemaStep(t *testing.T, name string) once.SchemaStep {
	t.Helper()
	for _, s := range once.SchemaSteps() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no schema step %s", name)
	return once.SchemaStep{}
}

// applyStepsBefore applies, each in its transaction, the steps of the runtime's schema
// before the one called name: a database as an earlier runtime left it.
func applyStepsBefore(t *testing.T, pool *pgxpool.Pool, name string) {
	t.Helper()
	for _, s := range once.SchemaSteps() {
		if s.Name == name {
			return
		}
		exec(t, pool, "BEGIN; "+s.Up+"\n"+s.RecordSQL()+" COMMIT;")
	}
	t.Fatalf("no schema step %s", name)
}

// seedOperations writes n operations in every state, as a runtime before the move left
// them: open, done with a result, failed with an error, released, uncertain, and done with
// a retention.
func seedOperations(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	exec(t, pool, fmt.Sprintf(`INSERT INTO once.operations (name, key, token, state, result, error, settled_at, expires_at, retain, uncertain_since)
SELECT 'app.Charge', 'seed' || i, 't' || i, s.state,
	CASE WHEN s.state = 'done' THEN json_build_object('charge', i) END,
	CASE WHEN s.state = 'failed' THEN 'declined ' || i END,
	CASE WHEN s.state <> 'open' THEN now() END,
	CASE WHEN i %% 6 = 5 THEN now() + interval '1 day' END,
	CASE WHEN i %% 6 = 5 THEN interval '1 day' END,
	CASE WHEN s.state = 'uncertain' THEN now() END
FROM generate_series(0, %d) i, LATERAL (SELECT (ARRAY['open', 'done', 'failed', 'released', 'uncertain', 'done'])[i %% 6 + 1] AS state) s`, n-1))
}

// operationsDigest is a digest of every operation's identity, state and outcome.
func operationsDigest(t *testing.T, pool *pgxpool.Pool, where string) string {
	t.Helper()
	var d string
	q := `SELECT count(*) || ':' || md5(coalesce(string_agg(concat_ws('|', id, name, key, state, token, result::text, error, settled_at, expires_at, retain, uncertain_since), ',' ORDER BY id), ''))
FROM once.operations WHERE ` + where
	if err := pool.QueryRow(context.Background(), q).Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

// stateIsLast fails t unless state is the last column of once.operations that rows hold,
// with the default 'open', the copy and its trigger are gone, and the four checks on state
// are there and validated.
func stateIsLast(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var last, def string
	var copies, triggers, checks int
	err := pool.QueryRow(ctx, `SELECT
	(SELECT attname FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum DESC LIMIT 1),
	(SELECT count(*) FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state_last' AND NOT attisdropped),
	(SELECT count(*) FROM pg_trigger WHERE tgrelid = 'once.operations'::regclass AND NOT tgisinternal),
	(SELECT count(*) FROM pg_constraint WHERE conrelid = 'once.operations'::regclass AND contype = 'c' AND convalidated
		AND conname IN ('operations_state', 'operations_settled', 'operations_expiry', 'operations_uncertain_since')),
	(SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid = 'once.operations'::regclass AND a.attname = 'state')`).Scan(&last, &copies, &triggers, &checks, &def)
	if err != nil {
		t.Fatal(err)
	}
	if last != "state" || copies != 0 || triggers != 0 || checks != 4 || def != "'open'::text" {
		t.Errorf("once.operations: last column %s, %d copies of state, %d triggers, %d validated checks on state, default %s; want state, 0, 0, 4, 'open'", last, copies, triggers, checks, def)
	}
}

// A database that already holds operations in every state moves state to the row's end
// (steps 6 to 10, through Migrate) while guards write to it: attempts that claimed before
// the move settle after it, writers claim and settle new keys throughout, and an earlier
// runtime's insert between the steps is copied by the trigger. Every operation keeps its
// state and outcome, every write lands, and Verify passes. Down and up again keep them too.
func TestOperationsState_MovesToTheRowsEndWithRowsAndWritersInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 10)
	applyStepsBefore(t, pool, stateCopyStep)
	seedOperations(t, pool, 3000)
	seeded := operationsDigest(t, pool, "key LIKE 'seed%'")

	g := once.Forever[int]{Name: "app.Charge"}
	// Holders claim before the move and settle after it.
	release := make(chan struct{})
	releaseHolders := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseHolders) // a test that stops early lets them go
	holders := make(chan error, 4)
	for h := range 4 {
		claimed := make(chan struct{})
		go func() {
			_, o, err := g.Do(ctx, pool, fmt.Sprintf("held%d", h), func(context.Context) (int, error) {
				close(claimed)
				<-release
				return h, nil
			})
			if err == nil && !o.Ran() {
				err = fmt.Errorf("held%d: outcome %v, want ran", h, o)
			}
			holders <- err
		}()
		<-claimed
	}
	// Writers claim and settle fresh keys until the move is done.
	stop := make(chan struct{})
	stopWriters := sync.OnceFunc(func() { close(stop) })
	var written atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { stopWriters(); wg.Wait() }) // before the pool closes
	writeErrs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := g.Do(ctx, pool, fmt.Sprintf("w%d-%d", w, i), func(context.Context) (int, error) { return i, nil }); err != nil {
					writeErrs <- err
					return
				}
				written.Add(1)
			}
		})
	}

	// The move, step by step as a migration tool applies it, with an earlier runtime's
	// insert (the state named in its own column) between the copy and the backfill.
	s6 := schemaStep(t, stateCopyStep)
	exec(t, pool, "BEGIN; "+s6.Up+"\n"+s6.RecordSQL()+" COMMIT;")
	exec(t, pool, "INSERT INTO once.operations (name, key, token, state, error, settled_at) VALUES ('app.Charge', 'between', 't', 'failed', 'declined', now())")
	time.Sleep(100 * time.Millisecond)
	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	stopWriters()
	wg.Wait()
	close(writeErrs)
	for err := range writeErrs {
		t.Errorf("a write during the move: %v", err)
	}
	releaseHolders()
	for range 4 {
		if err := <-holders; err != nil {
			t.Errorf("an attempt claimed before the move: %v", err)
		}
	}

	stateIsLast(t, pool)
	if got := operationsDigest(t, pool, "key LIKE 'seed%'"); got != seeded {
		t.Errorf("the operations written before the move changed: %s, was %s", got, seeded)
	}
	var done, held int64
	var between string
	if err := pool.QueryRow(ctx, `SELECT
	(SELECT count(*) FROM once.operations WHERE key LIKE 'w%' AND state = 'done'),
	(SELECT count(*) FROM once.operations WHERE key LIKE 'held%' AND state = 'done'),
	(SELECT state FROM once.operations WHERE key = 'between')`).Scan(&done, &held, &between); err != nil {
		t.Fatal(err)
	}
	if done != written.Load() || done == 0 || held != 4 || between != "failed" {
		t.Errorf("after the move: %d of %d writes done, %d of 4 held attempts done, the earlier runtime's insert %s (want failed)", done, written.Load(), held, between)
	}
	if err := once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...); err != nil {
		t.Fatalf("Verify after the move: %v", err)
	}

	// Each step's down, last first, and Migrate again: every operation as it was.
	all := operationsDigest(t, pool, "true")
	steps := once.SchemaSteps()
	for i := len(steps) - 1; i >= 0; i-- {
		exec(t, pool, "BEGIN; "+steps[i].Down+"\n"+steps[i].UnrecordSQL()+" COMMIT;")
		if steps[i].Name == stateCopyStep {
			break
		}
	}
	if got := operationsDigest(t, pool, "true"); got != all {
		t.Errorf("after the downs: %s, was %s", got, all)
	}
	if _, _, err := g.Do(ctx, pool, "after-down", func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatalf("a guard after the downs: %v", err)
	}
	all = operationsDigest(t, pool, "true")
	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatalf("Migrate after the downs: %v", err)
	}
	stateIsLast(t, pool)
	if got := operationsDigest(t, pool, "true"); got != all {
		t.Errorf("after up again: %s, was %s", got, all)
	}
}

// The backfill is what makes the move safe: until it has run and been validated, a row
// written before the copy reads 'done' from the copy whatever its state, and the step that
// drops state refuses to run, changing nothing.
func TestOperationsState_TheMoveRefusesToDropStateBeforeTheCopyIsValidated(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDatabase(t).Pool(t, 2)
	applyStepsBefore(t, pool, stateCopyStep)
	seedOperations(t, pool, 60)
	seeded := operationsDigest(t, pool, "true")
	ctx := context.Background()
	s6 := schemaStep(t, stateCopyStep)
	exec(t, pool, "BEGIN; "+s6.Up+"\n"+s6.RecordSQL()+" COMMIT;")

	var wrong int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM once.operations WHERE state_last <> state").Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 40 {
		t.Errorf("%d of 60 copies differ from state before the backfill, want the 40 not done", wrong)
	}
	s9 := schemaStep(t, stateLastStep)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, s9.Up+"\n"+s9.RecordSQL())
	tx.Rollback(ctx)
	if err == nil || !strings.Contains(err.Error(), "apply schema step 8 ("+stateCopiedStep+") first") {
		t.Fatalf("step 9 before the copy is validated: %v, want it refused", err)
	}
	var copies int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname IN ('state', 'state_last') AND NOT attisdropped").Scan(&copies); err != nil || copies != 2 {
		t.Errorf("after the refused step: %d of state and its copy (%v), want both", copies, err)
	}
	if got := operationsDigest(t, pool, "true"); got != seeded {
		t.Errorf("after the refused step: %s, was %s", got, seeded)
	}
}

// liveState is the place of state among once.operations' columns and how many dropped
// columns the table carries: what a second move would change.
func liveState(t *testing.T, pool *pgxpool.Pool) (attnum, dropped int) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `SELECT
	(SELECT attnum FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state' AND NOT attisdropped),
	(SELECT count(*) FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attisdropped)`).Scan(&attnum, &dropped)
	if err != nil {
		t.Fatal(err)
	}
	return attnum, dropped
}

// Once state has moved, the steps applied again (a migration tool applying oncegen's files
// after Migrate did) and an up after a partial down (to step 6 or 7) leave it where it is:
// no second copy, trigger or dropped column, and Migrate succeeds.
func TestOperationsState_StepsAppliedAgainLeaveStateWhereItIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 2)
	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	seedOperations(t, pool, 60)
	all := operationsDigest(t, pool, "true")
	attnum, dropped := liveState(t, pool)
	same := func(stage string) {
		t.Helper()
		stateIsLast(t, pool)
		if a, d := liveState(t, pool); a != attnum || d != dropped {
			t.Errorf("%s: state at column %d with %d dropped columns, was %d with %d: state moved again", stage, a, d, attnum, dropped)
		}
		if got := operationsDigest(t, pool, "true"); got != all {
			t.Errorf("%s: %s, was %s", stage, got, all)
		}
		if err := once.VerifyRequirements(ctx, pool, once.SchemaRequirements()...); err != nil {
			t.Errorf("%s: Verify: %v", stage, err)
		}
	}
	steps := once.SchemaSteps()
	first := schemaStep(t, stateCopyStep).Number
	for _, s := range steps[first-1:] {
		exec(t, pool, "BEGIN; "+s.Up+"\n"+s.RecordSQL()+" COMMIT;")
	}
	same("the steps applied again after Migrate")

	for _, to := range []int{first, first + 1} {
		for i := len(steps) - 1; i >= to; i-- {
			exec(t, pool, "BEGIN; "+steps[i].Down+"\n"+steps[i].UnrecordSQL()+" COMMIT;")
		}
		if err := once.Migrate(ctx, pool); err != nil {
			t.Fatalf("Migrate after a down to step %d: %v", to, err)
		}
		same(fmt.Sprintf("up after a down to step %d", to))
	}
}

// Step 9 names what else uses the old column and changes nothing, rather than dropping an
// index of the app's own with it (or failing on a view with PostgreSQL's words); a grant on
// the old column alone is given again on the moved one.
func TestOperationsState_TheMoveNamesWhatElseUsesState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 2)
	applyStepsBefore(t, pool, stateCopyStep)
	exec(t, pool, "CREATE INDEX app_uncertain ON once.operations (settled_at) WHERE state = 'uncertain'")
	exec(t, pool, "GRANT SELECT (state), UPDATE (state) ON once.operations TO PUBLIC")
	err := once.Migrate(ctx, pool)
	if err == nil || !strings.Contains(err.Error(), "once.operations.state is used by index once.app_uncertain") {
		t.Fatalf("Migrate with an index of the app's own on state: %v, want the index named", err)
	}
	at, err := once.AppliedSchemaStep(ctx, pool)
	if err != nil || at != schemaStep(t, stateLastStep).Number-1 {
		t.Fatalf("after the refused step: at step %d (%v), want the step before", at, err)
	}
	var still bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('once.app_uncertain') IS NOT NULL").Scan(&still); err != nil || !still {
		t.Fatalf("the app's index is gone after the refused step (%v)", err)
	}
	exec(t, pool, "DROP INDEX once.app_uncertain")
	if err := once.Migrate(ctx, pool); err != nil {
		t.Fatalf("Migrate once the index is dropped: %v", err)
	}
	stateIsLast(t, pool)
	// A grant on the column alone is given again on the moved one.
	var acl string
	if err := pool.QueryRow(ctx, "SELECT coalesce(attacl::text, '') FROM pg_attribute WHERE attrelid = 'once.operations'::regclass AND attname = 'state' AND NOT attisdropped").Scan(&acl); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(acl, "{=rw/") {
		t.Errorf("the moved column's grants: %q, want SELECT and UPDATE to PUBLIC", acl)
	}
}
