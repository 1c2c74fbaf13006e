package once_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

			// Straight to the server: pgx prepares each statement there, as an application does
			// without a pooler in front (behind one, in exec mode, no plan is kept).
			conn, err := pgx.Connect(ctx, db.DirectURL)
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

// Where a TRUNCATE of the two empty tables would reach past them or be refused, the step
// changes nothing and says why in a notice: an application's table whose foreign key refers
// to once.operations or once.checkpoints (PostgreSQL refuses the TRUNCATE, and the migration
// with it), a role that may not truncate them, a trigger on TRUNCATE (it would run), and a
// publication that sends truncations to subscribers. The negative control applies the step
// as first released (its superseded text) to the same database, which fails or truncates (a
// new relfilenode).
func TestOperationsEstimate_LeavesTheTablesWhereTruncateWouldReachPastThem(t *testing.T) {
	var step once.SchemaStep
	for _, s := range once.SchemaSteps() {
		if s.Name == estimateStep {
			step = s
		}
	}
	for _, tc := range []struct {
		name, setup, role, why string
		releasedFails          bool
	}{
		{name: "an application's foreign key to once.operations",
			setup:         `CREATE TABLE app_charges (id int PRIMARY KEY, operation_id bigint REFERENCES once.operations (id))`,
			why:           "app_charges refers to once.operations (foreign key app_charges_operation_id_fkey)",
			releasedFails: true},
		{name: "an application's foreign key to once.checkpoints",
			setup:         `CREATE TABLE app_steps (operation_id bigint, step text, FOREIGN KEY (operation_id, step) REFERENCES once.checkpoints (operation_id, step))`,
			why:           "app_steps refers to once.checkpoints",
			releasedFails: true},
		{name: "a role that may not truncate",
			role:          "migrator",
			setup:         `GRANT USAGE ON SCHEMA once TO %[1]s; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA once TO %[1]s`,
			why:           "may not truncate them",
			releasedFails: true},
		{name: "a trigger on TRUNCATE",
			setup: `CREATE TABLE app_audit (what text);
CREATE FUNCTION app_audit() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN INSERT INTO app_audit VALUES (TG_OP || ' ' || TG_TABLE_NAME); RETURN NULL; END $f$;
CREATE TRIGGER app_audit AFTER TRUNCATE ON once.operations FOR EACH STATEMENT EXECUTE FUNCTION app_audit()`,
			why: "trigger app_audit on once.operations fires on TRUNCATE"},
		{name: "a publication of every table",
			setup: `CREATE PUBLICATION app_changes FOR ALL TABLES`,
			why:   "publication app_changes sends truncations of once.operations"},
	} {
		for _, released := range []bool{false, true} {
			name := tc.name
			if released {
				name = "negative control: the step as released, " + name
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				db := pgtest.NewDatabase(t)
				pool := db.Pool(t, 2)
				applyStepsBefore(t, pool, estimateStep)
				role := ""
				if tc.role != "" {
					role = db.Name + "_" + tc.role
					exec(t, pool, "CREATE ROLE "+role)
					t.Cleanup(func() {
						exec(t, pool, "DROP OWNED BY "+role+"; DROP ROLE "+role)
					})
				}
				setup := tc.setup
				if role != "" {
					setup = fmt.Sprintf(setup, role)
				}
				exec(t, pool, setup)
				// A TRUNCATE gives each table a new file.
				files := func() (ops, points uint32, tuples float64) {
					t.Helper()
					err := pool.QueryRow(ctx, `SELECT relfilenode, (SELECT relfilenode FROM pg_class WHERE oid = 'once.checkpoints'::regclass), reltuples
FROM pg_class WHERE oid = 'once.operations'::regclass`).Scan(&ops, &points, &tuples)
					if err != nil {
						t.Fatal(err)
					}
					return ops, points, tuples
				}
				ops0, points0, tuples0 := files()

				cfg, err := pgx.ParseConfig(db.DirectURL)
				if err != nil {
					t.Fatal(err)
				}
				var notices []string
				cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
				conn, err := pgx.ConnectConfig(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				up := step.Up
				if released {
					up = step.Superseded[0]
				}
				setRole := ""
				if role != "" {
					setRole = "SET LOCAL ROLE " + role + ";\n"
				}
				_, applyErr := conn.Exec(ctx, "BEGIN;\n"+setRole+up+"\nCOMMIT;")
				conn.Close(ctx)
				ops1, points1, tuples1 := files()
				truncated := ops1 != ops0 || points1 != points0
				t.Logf("error %v, truncated %v, notices %q", applyErr, truncated, notices)

				if released {
					if tc.releasedFails && applyErr == nil || !tc.releasedFails && !truncated {
						t.Fatalf("the step as released: error %v, truncated %v; want it to fail (%v) or to truncate", applyErr, truncated, tc.releasedFails)
					}
					return
				}
				if applyErr != nil {
					t.Fatalf("applying the step: %v", applyErr)
				}
				if truncated || tuples1 != tuples0 || tuples0 != 0 {
					t.Errorf("the step truncated (%v) or changed the row estimate (%v, before %v); want the tables as they were", truncated, tuples1, tuples0)
				}
				if len(notices) != 1 || !strings.Contains(notices[0], "leaves once.operations as it is: ") || !strings.Contains(notices[0], tc.why) {
					t.Errorf("notices %q, want one saying %q", notices, tc.why)
				}
			})
		}
	}
}
