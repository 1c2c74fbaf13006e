package once_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

// estimateStep is the step that gives an empty once.operations back its never-analyzed
// estimate.
const estimateStep = "operations_estimate"

// operationsScans reads how often once.operations has been scanned whole and through an
// index, with the statistics conn's own backend has not yet reported flushed first.
func operationsScans(t *testing.T, conn *pgx.Conn) (seq, idx int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	err := conn.QueryRow(ctx, `SELECT seq_scan, coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relid = 'once.operations'::regclass`).Scan(&seq, &idx)
	if err != nil {
		t.Fatal(err)
	}
	return seq, idx
}

// A new database, then a run of Forever calls on fresh keys through one connection, the way
// pgx sends them: each statement prepared once and its plan kept from its sixth execution
// on, while the table is still small. After every step, each settle finds its claim through
// the table's key index. Without the last step, step 10's ANALYZE of the empty table has
// the planner take it for empty, and the kept plan scans the whole table in every settle.
func TestOperationsEstimate_ANewDatabaseFindsEachClaimThroughItsIndex(t *testing.T) {
	const calls = 300
	for _, tc := range []struct {
		name      string
		lastStep  bool
		wantScans bool
	}{
		{"every step", true, false},
		{"negative control: the steps before operations_estimate", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := pgtest.NewDatabase(t)
			pool := db.Pool(t, 2)
			if tc.lastStep {
				if err := once.Migrate(ctx, pool); err != nil {
					t.Fatal(err)
				}
			} else {
				applyStepsBefore(t, pool, estimateStep)
			}
			var reltuples float64
			if err := pool.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'once.operations'::regclass`).Scan(&reltuples); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]float64{true: -1, false: 0}[tc.lastStep]; reltuples != want {
				t.Fatalf("once.operations' row count before any call: %v, want %v", reltuples, want)
			}
			// Autovacuum would analyze the table mid-run and hide the scans of the control.
			exec(t, pool, `ALTER TABLE once.operations SET (autovacuum_enabled = off)`)

			conn, err := pgx.Connect(ctx, db.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			seq0, idx0 := operationsScans(t, conn)
			g := once.Forever[int]{Name: "billing.Charge"}
			for i := range calls {
				_, out, err := g.Do(ctx, conn, "order-"+strconv.Itoa(i), func(context.Context) (int, error) { return i, nil })
				if err != nil || out.Status != once.Ran {
					t.Fatalf("call %d: %v, %v", i, out.Status, err)
				}
			}
			seq1, idx1 := operationsScans(t, conn)
			var done int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM once.operations WHERE name = 'billing.Charge' AND state = 'done'`).Scan(&done); err != nil {
				t.Fatal(err)
			}
			if done != calls {
				t.Fatalf("%d operations done, want %d", done, calls)
			}
			seq, idx := seq1-seq0, idx1-idx0
			t.Logf("%d calls: %d scans of the whole table, %d through an index", calls, seq, idx)
			if scanned := seq > calls/2; scanned != tc.wantScans {
				t.Errorf("%d calls made %d scans of the whole of once.operations and %d through an index; want scans of the whole table: %v", calls, seq, idx, tc.wantScans)
			}
			if !tc.wantScans && seq > 5 {
				t.Errorf("%d calls made %d scans of the whole of once.operations, want at most 5", calls, seq)
			}
		})
	}
}

// The step leaves a table that holds rows as it was: rows, and what the planner was told of
// them. That includes a table analyzed while empty that has rows since, where a TRUNCATE
// would lose them.
func TestOperationsEstimate_LeavesATableWithRowsAsItWas(t *testing.T) {
	for _, analyzedEmpty := range []bool{false, true} {
		name := map[bool]string{false: "analyzed with rows", true: "analyzed empty, rows since"}[analyzedEmpty]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			pool := pgtest.NewDatabase(t).Pool(t, 2)
			applyStepsBefore(t, pool, estimateStep)
			exec(t, pool, `ALTER TABLE once.operations SET (autovacuum_enabled = off)`)
			if !analyzedEmpty {
				seedOperations(t, pool, 600)
				exec(t, pool, `ANALYZE once.operations`)
			} else {
				seedOperations(t, pool, 600) // step 10 analyzed the table while it was empty
			}
			exec(t, pool, `INSERT INTO once.checkpoints (operation_id, step, attempt) SELECT id, 'sent', 1 FROM once.operations WHERE state = 'open' LIMIT 5`)
			before := operationsDigest(t, pool, "true")
			var tuples0, tuples1 float64
			var points0, points1 int
			read := func(tuples *float64, points *int) {
				t.Helper()
				if err := pool.QueryRow(ctx, `SELECT reltuples, (SELECT count(*) FROM once.checkpoints) FROM pg_class WHERE oid = 'once.operations'::regclass`).Scan(tuples, points); err != nil {
					t.Fatal(err)
				}
			}
			read(&tuples0, &points0)
			if err := once.Migrate(ctx, pool); err != nil {
				t.Fatal(err)
			}
			read(&tuples1, &points1)
			if after := operationsDigest(t, pool, "true"); after != before {
				t.Errorf("operations after the step: %s, want %s as before", after, before)
			}
			if tuples1 != tuples0 || points1 != points0 || points0 != 5 {
				t.Errorf("row estimate %v and %d checkpoints after the step, want %v and %d as before (5)", tuples1, points1, tuples0, points0)
			}
		})
	}
}
