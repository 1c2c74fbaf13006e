package once_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

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
// on, while the table is still small. Each settle finds its claim through the table's key:
// the schema leaves a new database's once.operations never analyzed, which the planner takes
// for ten pages at least. The negative control analyzes the empty table first (as a schema
// step that ends with ANALYZE would): the planner then takes it for empty, and the kept
// plan scans the whole table in every settle.
func TestOperationsPlan_ANewDatabaseFindsEachClaimThroughItsKey(t *testing.T) {
	const calls = 300
	for _, tc := range []struct {
		name         string
		analyzeEmpty bool
		wantScans    bool
	}{
		{"a new database", false, false},
		{"negative control: the table analyzed while empty", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := pgtest.NewDatabase(t)
			pool := db.Pool(t, 2)
			if err := onceschema.Migrate(ctx, pool); err != nil {
				t.Fatal(err)
			}
			if tc.analyzeEmpty {
				exec(t, pool, `ANALYZE once.operations`)
			}
			var reltuples float64
			if err := pool.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'once.operations'::regclass`).Scan(&reltuples); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]float64{false: -1, true: 0}[tc.analyzeEmpty]; reltuples != want {
				t.Fatalf("once.operations' row count before any call: %v, want %v", reltuples, want)
			}
			// Autovacuum would analyze the table mid-run and hide the scans of the control.
			exec(t, pool, `ALTER TABLE once.operations SET (autovacuum_enabled = off)`)

			// Straight to the server: pgx prepares each statement there, as an application does
			// without a pooler in front (behind one, in exec mode, no plan is kept).
			conn, err := pgx.Connect(ctx, db.DirectURL)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			seq0, idx0 := operationsScans(t, conn)
			g := once.Forever{Name: "billing.Charge"}
			for i := range calls {
				_, out, err := once.ForeverValue(ctx, conn, g, once.Ref{Key: "order-" + strconv.Itoa(i)}, func(context.Context) (int, error) { return i, nil })
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
