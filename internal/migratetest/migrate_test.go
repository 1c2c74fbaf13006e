package migratetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"ariga.io/atlas/sql/migrate"
	gomigrate "github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	_ "github.com/golang-migrate/migrate/v4/source/file"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/oncekit/once/internal/pgtest"
)

// oncegen is the command under test, built from this checkout.
var oncegen string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "migratetest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	oncegen = filepath.Join(dir, "oncegen")
	build := exec.Command("go", "build", "-o", oncegen, "./cmd/oncegen")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building oncegen: %v\n%s", err, out)
		return 1
	}
	return pgtest.Main(m)
}

func repoRoot() string {
	root, _ := filepath.Abs("../..")
	return root
}

// The golden packages: kinds has no table= form (only the runtime's schema), tables has
// all four (columns, a check constraint, plain, partial and NULLS NOT DISTINCT indexes, and
// a name over 63 bytes, shortened).
var (
	first  = []string{"./testdata/generate/kinds"}
	second = []string{"./testdata/generate/kinds", "./testdata/generate/tables"}
)

// userTables are the tables the tables package inserts into, before oncegen's migrations.
const userTables = `CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, payload text, status text NOT NULL);
CREATE SCHEMA billing;
CREATE TABLE billing.charges (org_id bigint, day text);
CREATE TABLE alerts (rule_id text NOT NULL);
CREATE TABLE quota (org_id bigint NOT NULL, day text NOT NULL);
CREATE TABLE customer_notification_preferences_history (organisation_identifier bigint, notification_channel_name text);`

func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(oncegen, args...)
	cmd.Dir = repoRoot()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// writeMigrations makes oncegen write format's migrations as the declarations grow, shrink
// and grow again (first, second, first, second): each run writes only the difference, so
// the files hold every kind of statement oncegen emits, creating and dropping, each with its
// down part. A last run checks nothing is due.
func writeMigrations(t *testing.T, format string) string {
	t.Helper()
	dir := t.TempDir()
	for _, pkgs := range [][]string{first, second, first, second} {
		if code, out := run(t, append([]string{"-migrations", dir, "-format", format}, pkgs...)...); code != 0 {
			t.Fatalf("oncegen -format %s: exit %d\n%s", format, code, out)
		}
	}
	if code, out := run(t, append([]string{"-check", "-migrations", dir, "-format", format}, second...)...); code != 0 {
		t.Fatalf("a migration is still due after writing them: %s", out)
	}
	return dir
}

type object struct {
	Kind, Name, Table, Def string
}

func snapshotIndexes(t *testing.T, dir string) []object {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "oncegen.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var snap struct{ Objects []object }
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	var idx []object
	for _, o := range snap.Objects {
		if o.Kind == "index" {
			idx = append(idx, o)
		}
	}
	if len(idx) != 5 {
		t.Fatalf("snapshot holds %d indexes, want 5", len(idx))
	}
	for _, o := range idx {
		if len(o.Name) > 63 {
			t.Errorf("index name %s is over 63 bytes", o.Name)
		}
	}
	return idx
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// checkApplied proves the migrations took: every index reads back from pg_get_indexdef
// exactly as emitted, verify passes, and after dropping one index verify fails naming it.
func checkApplied(t *testing.T, db *pgtest.Database, dir string) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, db.URL)
	for _, o := range snapshotIndexes(t, dir) {
		schema, _, _ := strings.Cut(o.Table, ".")
		var def string
		err := conn.QueryRow(ctx, `SELECT pg_get_indexdef(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`, schema, o.Name).Scan(&def)
		if err != nil {
			t.Fatalf("index %s: %v", o.Name, err)
		}
		if def != o.Def {
			t.Errorf("pg_get_indexdef drifted from the emitted text:\n have %s\n want %s", def, o.Def)
		}
	}
	if code, out := run(t, append([]string{"verify", "-db", db.URL}, second...)...); code != 0 {
		t.Fatalf("verify after up: exit %d\n%s", code, out)
	}
	if _, err := conn.Exec(ctx, "DROP INDEX billing.charges_org_id_day_once_forever"); err != nil {
		t.Fatal(err)
	}
	code, out := run(t, append([]string{"verify", "-db", db.URL}, second...)...)
	if code != 1 || !strings.Contains(out, "missing: index charges_org_id_day_once_forever on billing.charges") {
		t.Fatalf("verify after dropping an index: exit %d\n%s", code, out)
	}
}

// checkDown proves every down part ran: nothing oncegen made is left on the app's tables,
// and once's tables are kept (a generated down never drops them).
func checkDown(t *testing.T, db *pgtest.Database) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, db.URL)
	var left []string
	rows, err := conn.Query(ctx, `SELECT relname FROM pg_class WHERE relname LIKE '%once%' AND relkind IN ('i', 'r') AND relnamespace <> 'once'::regnamespace
UNION ALL SELECT attname FROM pg_attribute WHERE attrelid IN ('alerts'::regclass, 'quota'::regclass) AND attname IN ('fired_at', 'used') AND NOT attisdropped
UNION ALL SELECT conname FROM pg_constraint WHERE conname LIKE '%once%' AND connamespace <> 'once'::regnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(left) > 0 {
		t.Errorf("left after every down migration: %v", left)
	}
	var kept int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'once'").Scan(&kept); err != nil || kept < 9 {
		t.Errorf("once's tables after every down migration: %d (%v), want them kept", kept, err)
	}
}

func newDatabase(t *testing.T) *pgtest.Database {
	t.Helper()
	db := pgtest.NewDatabase(t)
	if _, err := connect(t, db.URL).Exec(context.Background(), userTables); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestGoose_UpAndDown(t *testing.T) {
	t.Parallel()
	dir := writeMigrations(t, "goose")
	db := newDatabase(t)
	sqldb := stdlib.OpenDB(*mustConfig(t, db.URL))
	defer sqldb.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqldb, os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("goose up: %v", err)
	}
	checkApplied(t, db, dir)
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("goose down: %v", err)
	}
	checkDown(t, db)
}

func mustConfig(t *testing.T, url string) *pgx.ConnConfig {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestGolangMigrate_UpAndDown(t *testing.T) {
	t.Parallel()
	dir := writeMigrations(t, "migrate")
	db := newDatabase(t)
	m, err := gomigrate.New("file://"+dir, "pgx5://"+strings.TrimPrefix(db.URL, "postgres://"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Up(); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	checkApplied(t, db, dir)
	if err := m.Down(); err != nil {
		t.Fatalf("migrate down: %v", err)
	}
	checkDown(t, db)
}

func TestPlainSQL_UpAndDownWithPsql(t *testing.T) {
	t.Parallel()
	dir := writeMigrations(t, "sql")
	db := newDatabase(t)
	ups, _ := filepath.Glob(filepath.Join(dir, "*.up.sql"))
	downs, _ := filepath.Glob(filepath.Join(dir, "*.down.sql"))
	sort.Strings(ups)
	sort.Sort(sort.Reverse(sort.StringSlice(downs)))
	for _, f := range ups {
		psql(t, db.URL, f)
	}
	checkApplied(t, db, dir)
	for _, f := range downs {
		psql(t, db.URL, f)
	}
	checkDown(t, db)
}

func psql(t *testing.T, url, file string) {
	t.Helper()
	if out, err := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", file).CombinedOutput(); err != nil {
		t.Fatalf("psql -f %s: %v\n%s", filepath.Base(file), err, out)
	}
}

// Atlas checks a migration directory against atlas.sum before it applies anything: the sum
// oncegen writes must be the one Atlas computes, and a changed file must break it. Atlas
// keeps no down files (it plans reversals itself), so the up files are applied with psql.
func TestAtlas_SumValidatesAndUpFilesApply(t *testing.T) {
	t.Parallel()
	dir := writeMigrations(t, "atlas")
	local, err := migrate.NewLocalDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate.Validate(local); err != nil {
		t.Fatalf("atlas rejects the directory: %v", err)
	}
	files, err := local.Files()
	if err != nil {
		t.Fatal(err)
	}
	nonTx := 0
	for _, f := range files {
		if strings.HasPrefix(string(f.Bytes()), "-- atlas:txmode none\n") {
			nonTx++
			stmts, err := f.Stmts()
			if err != nil || len(stmts) != 1 {
				t.Errorf("%s: %d statements (%v), want CREATE INDEX CONCURRENTLY alone", f.Name(), len(stmts), err)
			}
		}
	}
	if nonTx != 15 {
		t.Errorf("%d files run outside a transaction, want one per index built, dropped and built again (15)", nonTx)
	}
	db := newDatabase(t)
	for _, f := range files {
		psql(t, db.URL, filepath.Join(dir, f.Name()))
	}
	checkApplied(t, db, dir)

	// Negative control: the sum catches a changed file.
	name := filepath.Join(dir, files[len(files)-1].Name())
	b, _ := os.ReadFile(name)
	os.WriteFile(name, append(b, []byte("-- changed\n")...), 0o644)
	if err := migrate.Validate(local); err == nil {
		t.Error("atlas accepted a directory whose file no longer matches atlas.sum")
	}
}

// populated are the app's tables holding rows before oncegen's migrations, the columns a
// guard needs among them where the app has them already: quota.used, with values, is
// adopted; alerts has no latch column, so fired_at is added.
const populated = `CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, payload text, status text NOT NULL);
INSERT INTO jobs (dedupe_key, payload, status) SELECT 'k' || i, 'p' || i, CASE WHEN i % 3 = 0 THEN 'done' ELSE 'pending' END FROM generate_series(1, 500) i;
CREATE SCHEMA billing;
CREATE TABLE billing.charges (org_id bigint, day text);
INSERT INTO billing.charges SELECT i, 'd' || (i % 7) FROM generate_series(1, 500) i;
INSERT INTO billing.charges VALUES (NULL, 'd1');
CREATE TABLE alerts (rule_id text NOT NULL, note text);
INSERT INTO alerts SELECT 'r' || i, 'n' || i FROM generate_series(1, 500) i;
CREATE TABLE quota (org_id bigint NOT NULL, day text NOT NULL, used bigint NOT NULL DEFAULT 0);
INSERT INTO quota SELECT i, 'd', 7 FROM generate_series(1, 500) i;
CREATE TABLE customer_notification_preferences_history (organisation_identifier bigint, notification_channel_name text, since date);
INSERT INTO customer_notification_preferences_history SELECT i, 'email', date '2026-01-01' + i FROM generate_series(1, 500) i;`

var appTables = []string{"jobs", "billing.charges", "alerts", "quota", "customer_notification_preferences_history"}

// onceRows puts a row in every once.* table.
const onceRows = `INSERT INTO once.latches (name, key, fired_at, firings, token) VALUES ('app.Alert', 'r', now(), 1, 't');
INSERT INTO once.counter_slots (name, key, slot, token) VALUES ('app.Quota', 'k', 0, 't');
INSERT INTO once.open_claims (name, key, token, stale_after) VALUES ('app.Run', 'k', 't', interval '1 minute');
INSERT INTO once.leases (name, key, holder, fence, acquired_at, expires_at) VALUES ('app.Tick', 'k', 'h', 1, now(), now() + interval '1 minute');
INSERT INTO once.operations (name, scope, key, id, token, state, settled_at) VALUES ('app.Charge', '', 'k', '00000000-0000-4000-8000-00000000002a', 't', 'done', now());
INSERT INTO once.operations (name, scope, key, id, token, state, error, settled_at) VALUES ('app.Charge', '', 'declined', gen_random_uuid(), 't', 'failed', 'card declined', now());
INSERT INTO once.operations (name, scope, key, id, token) VALUES ('app.Charge', '', 'held', gen_random_uuid(), 't');
INSERT INTO once.checkpoints (operation_id, step, attempt) VALUES ('00000000-0000-4000-8000-00000000002a', 'charged', 1);
INSERT INTO once.ledger (operation_id, operation, scope, key, kind, unit, quantity) VALUES ('00000000-0000-4000-8000-00000000002a', 'app.Charge', '', 'k', 'cost', 'usd_cents', 250);
INSERT INTO once.followups (operation_id, operation, scope, key, action, provider_key) VALUES ('00000000-0000-4000-8000-00000000002a', 'app.Charge', '', 'k', 'receipt', 'pk');
INSERT INTO once.audit (actor, action, target, reason) VALUES ('ops', 'resolve', 'app.Charge', 'reconciled by hand');`

// populatedState is what must not change: a checksum of each app table over the columns it
// had before oncegen's migrations, each table's relfilenode (a rewrite gives it a new one),
// and the rows of once's tables (counted, when they exist, and each operation's state).
type populatedState struct {
	sums, files map[string]string
	once        string
}

func readState(t *testing.T, conn *pgx.Conn, cols map[string]string) populatedState {
	t.Helper()
	ctx := context.Background()
	st := populatedState{sums: map[string]string{}, files: map[string]string{}}
	for _, tbl := range appTables {
		var sum, file string
		q := fmt.Sprintf("SELECT md5(coalesce(string_agg(r::text, ',' ORDER BY r::text), '')), (SELECT relfilenode::text FROM pg_class WHERE oid = '%s'::regclass) FROM (SELECT %s FROM %s) r", tbl, cols[tbl], tbl)
		if err := conn.QueryRow(ctx, q).Scan(&sum, &file); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		st.sums[tbl], st.files[tbl] = sum, file
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('once.audit') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return st
	}
	err := conn.QueryRow(ctx, `SELECT string_agg(n::text, ' ') FROM (SELECT (SELECT count(*) FROM once.counter_slots) UNION ALL SELECT (SELECT count(*) FROM once.latches)
UNION ALL SELECT (SELECT count(*) FROM once.open_claims) UNION ALL SELECT (SELECT count(*) FROM once.leases)
UNION ALL SELECT (SELECT count(*) FROM once.operations) UNION ALL SELECT (SELECT count(*) FROM once.checkpoints)
UNION ALL SELECT (SELECT count(*) FROM once.ledger) UNION ALL SELECT (SELECT count(*) FROM once.followups)
UNION ALL SELECT (SELECT count(*) FROM once.audit)) c(n)`).Scan(&st.once)
	if err != nil {
		t.Fatal(err)
	}
	var states string
	if err := conn.QueryRow(ctx, "SELECT coalesce(string_agg(key || '=' || state, ',' ORDER BY key), '') FROM once.operations").Scan(&states); err != nil {
		t.Fatal(err)
	}
	st.once += " " + states
	return st
}

// upDownUp checks a populated database through up, down to before oncegen's files, and up
// again: every app table's rows unchanged at every stage and never rewritten, the episode
// table's existing rows armed (latch NULL), once's rows kept by the down.
func upDownUp(t *testing.T, tool func(url string) (up, down func())) {
	t.Helper()
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	conn := connect(t, db.URL)
	up, down := tool(db.URL)
	if _, err := conn.Exec(ctx, populated); err != nil {
		t.Fatal(err)
	}
	cols := map[string]string{}
	for _, tbl := range appTables {
		var c string
		if err := conn.QueryRow(ctx, `SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, tbl).Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols[tbl] = c
	}
	before := readState(t, conn, cols)
	same := func(stage string, want populatedState, onceToo bool) {
		t.Helper()
		got := readState(t, conn, cols)
		for _, tbl := range appTables {
			if got.sums[tbl] != want.sums[tbl] {
				t.Errorf("%s: %s's rows changed", stage, tbl)
			}
			if got.files[tbl] != want.files[tbl] {
				t.Errorf("%s: %s was rewritten (relfilenode %s, was %s)", stage, tbl, got.files[tbl], want.files[tbl])
			}
		}
		if onceToo && got.once != want.once {
			t.Errorf("%s: once's rows per table %q, want %q", stage, got.once, want.once)
		}
	}

	up()
	same("up", before, false)
	var armed, latched int
	if err := conn.QueryRow(ctx, "SELECT count(*) FILTER (WHERE fired_at IS NULL), count(*) FILTER (WHERE fired_at IS NOT NULL) FROM alerts").Scan(&armed, &latched); err != nil {
		t.Fatal(err)
	}
	if armed != 500 || latched != 0 {
		t.Errorf("after up, alerts has %d rows armed and %d latched: every existing row must stay armed", armed, latched)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO alerts (rule_id) VALUES ('new')"); err != nil {
		t.Fatal(err)
	}
	var fired bool
	if err := conn.QueryRow(ctx, "DELETE FROM alerts WHERE rule_id = 'new' RETURNING fired_at IS NOT NULL").Scan(&fired); err != nil || !fired {
		t.Errorf("a row inserted after up is not latched by the column's default (%v)", err)
	}
	if code, out := run(t, append([]string{"verify", "-db", db.URL}, second...)...); code != 0 {
		t.Fatalf("verify after up: exit %d\n%s", code, out)
	}
	if _, err := conn.Exec(ctx, onceRows); err != nil {
		t.Fatal(err)
	}
	withOnce := readState(t, conn, cols)

	down()
	same("down", withOnce, true)
	var adopted int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM quota WHERE used = 7").Scan(&adopted); err != nil || adopted != 500 {
		t.Errorf("after down, quota.used holds 7 in %d rows (%v), want 500: the column was the app's", adopted, err)
	}

	up()
	same("up again", withOnce, true)
	if code, out := run(t, append([]string{"verify", "-db", db.URL}, second...)...); code != 0 {
		t.Fatalf("verify after up again: exit %d\n%s", code, out)
	}
}

func TestPopulated_GooseUpDownUpKeepsEveryRow(t *testing.T) {
	t.Parallel()
	dir := writeMigrations(t, "goose")
	upDownUp(t, func(url string) (func(), func()) {
		sqldb := stdlib.OpenDB(*mustConfig(t, url))
		t.Cleanup(func() { sqldb.Close() })
		p, err := goose.NewProvider(goose.DialectPostgres, sqldb, os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		return func() {
				if _, err := p.Up(ctx); err != nil {
					t.Fatalf("goose up: %v", err)
				}
			}, func() {
				if _, err := p.DownTo(ctx, 0); err != nil {
					t.Fatalf("goose down: %v", err)
				}
			}
	})
}

func TestPopulated_GolangMigrateUpDownUpKeepsEveryRow(t *testing.T) {
	t.Parallel()
	dir := writeMigrations(t, "migrate")
	upDownUp(t, func(url string) (func(), func()) {
		m, err := gomigrate.New("file://"+dir, "pgx5://"+strings.TrimPrefix(url, "postgres://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return func() {
				if err := m.Up(); err != nil {
					t.Fatalf("migrate up: %v", err)
				}
			}, func() {
				if err := m.Down(); err != nil {
					t.Fatalf("migrate down: %v", err)
				}
			}
	})
}

func TestPopulated_PsqlUpDownUpKeepsEveryRow(t *testing.T) {
	t.Parallel()
	dir := writeMigrations(t, "sql")
	ups, _ := filepath.Glob(filepath.Join(dir, "*.up.sql"))
	downs, _ := filepath.Glob(filepath.Join(dir, "*.down.sql"))
	sort.Strings(ups)
	sort.Sort(sort.Reverse(sort.StringSlice(downs)))
	upDownUp(t, func(url string) (func(), func()) {
		return func() {
				for _, f := range ups {
					psql(t, url, f)
				}
			}, func() {
				for _, f := range downs {
					psql(t, url, f)
				}
			}
	})
}

// The checks can fail: the forms oncegen wrote before (a latch added with its volatile
// default; a down that dropped the app's counter column, and an up that added it back)
// rewrite alerts and latch every row, and change quota's rows.
func TestPopulated_TheChecksCatchTheOldForms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.NewDatabase(t).URL)
	if _, err := conn.Exec(ctx, populated); err != nil {
		t.Fatal(err)
	}
	cols := map[string]string{"jobs": "*", "billing.charges": "*", "alerts": "rule_id, note", "quota": "org_id, day, used", "customer_notification_preferences_history": "*"}
	before := readState(t, conn, cols)
	old := `ALTER TABLE alerts ADD COLUMN IF NOT EXISTS fired_at timestamptz NULL DEFAULT clock_timestamp();
ALTER TABLE quota DROP COLUMN IF EXISTS used;
ALTER TABLE quota ADD COLUMN IF NOT EXISTS used bigint NOT NULL DEFAULT 0;`
	if _, err := conn.Exec(ctx, old); err != nil {
		t.Fatal(err)
	}
	after := readState(t, conn, cols)
	if after.files["alerts"] == before.files["alerts"] {
		t.Error("a volatile default did not show as a rewrite of alerts")
	}
	if after.sums["quota"] == before.sums["quota"] {
		t.Error("quota.used dropped and added back did not show as changed rows")
	}
	var latched int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM alerts WHERE fired_at IS NOT NULL").Scan(&latched); err != nil || latched != 500 {
		t.Errorf("the old latch form latched %d rows (%v), want all 500", latched, err)
	}
}
