package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceschema"
)

const appSrc = `package app

import (
	"context"

	"github.com/jackc/pgx/v5"
)

type User struct{ ID int64 }

// Welcome mails a new user.
//
//once:forever key=u.ID
func Welcome(ctx context.Context, u User) error { return nil }

// Enqueue queues a job while none with its key is open.
//
//once:open table=jobs columns=dedupe_key status=status open=pending,running
func Enqueue(ctx context.Context, tx pgx.Tx, key string) error { return nil }
`

func TestCheck_MissingStaleAndOrphanedFilesExitOneWithADiff(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc})
	gen := filepath.Join(mod, "app", "once_gen.go")

	// Missing.
	code, stdout, stderr := oncegen(t, mod, "-check")
	if code != 1 || !strings.Contains(stdout, "--- /dev/null\n+++ b/app/once_gen.go\n") || !strings.Contains(stdout, "+func WelcomeOnce(") {
		t.Fatalf("-check with no generated file: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(gen); !os.IsNotExist(err) {
		t.Fatal("-check wrote the file")
	}

	// Generated: up to date, and a second run does not touch it.
	if code, _, stderr := oncegen(t, mod); code != 0 {
		t.Fatalf("oncegen: exit %d: %s", code, stderr)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(gen, old, old); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := oncegen(t, mod, "-check"); code != 0 {
		t.Fatalf("-check after generating: exit %d\n%s", code, stdout)
	}
	if code, _, _ := oncegen(t, mod); code != 0 {
		t.Fatal("second run failed")
	}
	if fi, _ := os.Stat(gen); !fi.ModTime().Equal(old) {
		t.Errorf("an unchanged file was rewritten (mtime %v)", fi.ModTime())
	}

	// Stale: a hand edit shows as a diff.
	src, _ := os.ReadFile(gen)
	os.WriteFile(gen, []byte(strings.Replace(string(src), `{Name: "app.Welcome"}`, `{Name: "app.Hello"}`, 1)), 0o644)
	code, stdout, _ = oncegen(t, mod, "-check")
	if code != 1 || !strings.Contains(stdout, "--- a/app/once_gen.go\n+++ b/app/once_gen.go\n") ||
		!strings.Contains(stdout, `-	return once.Forever{Name: "app.Hello"}.Do(ctx, db, once.Ref{Key: once.MustKey(u.ID)}, fn)`) ||
		!strings.Contains(stdout, `+	return once.Forever{Name: "app.Welcome"}.Do(ctx, db, once.Ref{Key: once.MustKey(u.ID)}, fn)`) {
		t.Fatalf("-check on an edited file: exit %d\n%s", code, stdout)
	}

	// Orphaned: no directive left produces it.
	plain := strings.NewReplacer("//once:forever key=u.ID\n", "", "//once:open table=jobs columns=dedupe_key status=status open=pending,running\n", "").Replace(appSrc)
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(plain), 0o644)
	code, stdout, _ = oncegen(t, mod, "-check")
	if code != 1 || !strings.Contains(stdout, "--- a/app/once_gen.go\n+++ /dev/null\n") {
		t.Fatalf("-check with an orphan: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := oncegen(t, mod); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	if _, err := os.Stat(gen); !os.IsNotExist(err) {
		t.Error("the orphaned file was not removed")
	}
}

func TestBadInput_ExitsTwoAndWritesNothing(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc})
	if code, _, stderr := oncegen(t, mod); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	gen := filepath.Join(mod, "app", "once_gen.go")
	before, _ := os.ReadFile(gen)

	// A second, bad package: the good one's file must not change either.
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(strings.Replace(appSrc, "key=u.ID", "key=u.ID name=app.welcome", 1)), 0o644)
	os.MkdirAll(filepath.Join(mod, "bad"), 0o755)
	os.WriteFile(filepath.Join(mod, "bad", "bad.go"), []byte("package bad\n\nimport \"context\"\n\n//once:lease key=id\nfunc F(ctx context.Context, id string) error { return nil }\n"), 0o644)
	code, stdout, stderr := oncegen(t, mod, "-migrations", "migrations")
	want := "bad/bad.go:5:1: //once:lease on F: missing ttl= (for example ttl=10s)\noncegen: nothing was written\n"
	if code != 2 || stderr != want || stdout != "" {
		t.Fatalf("exit %d\nstderr %q\nwant   %q", code, stderr, want)
	}
	after, _ := os.ReadFile(gen)
	if string(before) != string(after) {
		t.Error("a generated file changed although the run failed")
	}
	if _, err := os.Stat(filepath.Join(mod, "bad", "once_gen.go")); !os.IsNotExist(err) {
		t.Error("the bad package got a generated file")
	}
	if _, err := os.Stat(filepath.Join(mod, "migrations")); !os.IsNotExist(err) {
		t.Error("migrations were written although the run failed")
	}
	if code, _, _ := oncegen(t, mod, "-format", "liquibase"); code != 2 {
		t.Errorf("unknown format: exit %d, want 2", code)
	}
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations", "-lock-timeout", "5 seconds", "./app"); code != 2 || !strings.Contains(stderr, `lock timeout "5 seconds"`) {
		t.Errorf("a timeout PostgreSQL would not read: exit %d, want 2\n%s", code, stderr)
	}
}

// A package that does not type-check is refused, exit 2, with its first errors and nothing
// written; a package that uses a wrapper before it is generated is not refused for that.
func TestBadInput_APackageThatDoesNotTypeCheckWritesNothing(t *testing.T) {
	t.Parallel()
	uses := "package main\n\nimport (\n\t\"context\"\n\n\t\"example.com/e2e/app\"\n)\n\nfunc main() {\n\t_, _ = app.WelcomeOnce(context.Background(), nil, app.User{ID: 1})\n\t_ = app.EnqueueConflict\n}\n"
	mod := newModule(t, map[string]string{"app/app.go": appSrc, "cmd/main.go": uses})
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("a package using the wrappers before they exist: exit %d\n%s", code, stderr)
	}
	gen := filepath.Join(mod, "app", "once_gen.go")
	before, _ := os.ReadFile(gen)
	broken := strings.Replace(appSrc, "func Welcome(ctx context.Context, u User) error { return nil }", "func Welcome(ctx context.Context, u User) error { var n int = \"seven\"; _ = n; return nil }", 1)
	broken = strings.Replace(broken, "key=u.ID", "key=u.ID name=app.welcome2", 1)
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(broken), 0o644)
	code, stdout, stderr := oncegen(t, mod, "-migrations", "migrations2")
	if code != 2 || stdout != "" || !strings.Contains(stderr, `app/app.go:14:63: cannot use "seven"`) || !strings.Contains(stderr, `"seven"`) ||
		!strings.HasSuffix(stderr, "oncegen: nothing was written\n") {
		t.Fatalf("exit %d, want 2 with the type error\nstdout %q\nstderr %s", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(gen); string(after) != string(before) {
		t.Error("the generated file changed although the package does not type-check")
	}
	if _, err := os.Stat(filepath.Join(mod, "migrations2")); !os.IsNotExist(err) {
		t.Error("migrations were written although the package does not type-check")
	}
}

// inventory on the golden cases, run as a user runs it, matches the golden table and JSON.
func TestInventory_GoldenCases(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	args := []string{"./testdata/generate/kinds", "./testdata/generate/tables", "./testdata/generate/multi/..."}
	for _, c := range []struct{ format, golden string }{{"md", "inventory.md"}, {"json", "inventory.json"}} {
		code, stdout, stderr := oncegen(t, root, append([]string{"inventory", "-format", c.format}, args...)...)
		if code != 0 {
			t.Fatalf("inventory -format %s: exit %d: %s", c.format, code, stderr)
		}
		want, err := os.ReadFile(filepath.Join(root, "testdata/inventory", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if stdout != string(want) {
			t.Errorf("inventory -format %s differs from testdata/inventory/%s:\n%s", c.format, c.golden, stdout)
		}
	}
}

// Migrations: a first run writes the runtime's schema and each constraint; a change of
// declarations writes only the difference, with its down part; a rename is refused.
func TestMigrations_SnapshotYieldsOnlyTheDifference(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc})
	migs := filepath.Join(mod, "migrations")
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	first := names(filesWith(t, migs, ""))
	wantFirst := append(stepFiles(".down.sql", ".up.sql"), appFile(1, "jobs_dedupe_key_once_open.down.sql"), appFile(1, "jobs_dedupe_key_once_open.up.sql"), "oncegen.snapshot.json")
	if strings.Join(first, " ") != strings.Join(wantFirst, " ") {
		t.Fatalf("first migrations: %v, want %v", first, wantFirst)
	}
	if code, stdout, _ := oncegen(t, mod, "-check", "-migrations", "migrations"); code != 0 {
		t.Fatalf("-check after writing migrations: exit %d\n%s", code, stdout)
	}

	// A new table= guard: one new index, nothing else.
	added := appSrc + `
// Charge records a charge once for ever.
//
//once:forever table=charges columns=order_id
func Charge(ctx context.Context, tx pgx.Tx, order string) error { return nil }
`
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(added), 0o644)
	code, stdout, _ := oncegen(t, mod, "-check", "-migrations", "migrations")
	if code != 1 || !strings.Contains(stdout, "+++ b/migrations/"+appFile(2, "charges_order_id_once_forever.up.sql")) {
		t.Fatalf("-check with a due migration: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	up, _ := os.ReadFile(filepath.Join(migs, appFile(2, "charges_order_id_once_forever.up.sql")))
	down, _ := os.ReadFile(filepath.Join(migs, appFile(2, "charges_order_id_once_forever.down.sql")))
	if !strings.Contains(string(up), "CREATE UNIQUE INDEX CONCURRENTLY charges_order_id_once_forever ON public.charges USING btree (order_id);") ||
		!strings.Contains(string(down), "DROP INDEX CONCURRENTLY IF EXISTS public.charges_order_id_once_forever;") {
		t.Errorf("the new migration:\n%s\n%s", up, down)
	}
	if got, want := len(filesWith(t, migs, ".up.sql")), onceschema.LatestStep()+2; got != want {
		t.Errorf("%d up migrations, want %d: only the difference is new", got, want)
	}

	// Removing it again: a migration that drops it, whose down part recreates it.
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(appSrc), 0o644)
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	up, _ = os.ReadFile(filepath.Join(migs, appFile(3, "drop_charges_order_id_once_forever.up.sql")))
	down, _ = os.ReadFile(filepath.Join(migs, appFile(3, "drop_charges_order_id_once_forever.down.sql")))
	if !strings.Contains(string(up), "DROP INDEX CONCURRENTLY IF EXISTS public.charges_order_id_once_forever;") ||
		!strings.Contains(string(down), "CREATE UNIQUE INDEX CONCURRENTLY charges_order_id_once_forever") {
		t.Errorf("the drop migration:\n%s\n%s", up, down)
	}

	// Renaming Welcome would reset its history: refused, with the fix.
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(strings.ReplaceAll(appSrc, "Welcome", "Greet")), 0o644)
	code, _, stderr := oncegen(t, mod, "-migrations", "migrations")
	if code != 2 || !strings.Contains(stderr, "guard app.Welcome (example.com/e2e/app.Welcome) looks renamed to app.Greet (example.com/e2e/app.Greet), same kind and key: its stored history is under the old name; add name=app.Welcome") {
		t.Fatalf("rename: exit %d\n%s", code, stderr)
	}
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(strings.ReplaceAll(strings.Replace(appSrc, "key=u.ID", "key=u.ID name=app.Welcome", 1), "func Welcome", "func Greet")), 0o644)
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("rename with name=: %s", stderr)
	}
}

// A rename accepted with -allow-rename is recorded in the snapshot, so later runs do not
// report it again; a table= guard's rename is never reported, since its promise lives on
// the table's rows and index, which the new name leaves as they are.
func TestMigrations_AcceptedRenameIsRecordedAndTableGuardsKeepTheirRows(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc})
	migs := filepath.Join(mod, "migrations")
	snapshot := filepath.Join(migs, "oncegen.snapshot.json")
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	files := len(filesWith(t, migs, ""))

	renamed := strings.ReplaceAll(appSrc, "Welcome", "Greet")
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(renamed), 0o644)
	if code, _, _ := oncegen(t, mod, "-migrations", "migrations"); code != 2 {
		t.Fatalf("rename without -allow-rename: exit %d, want 2", code)
	}
	code, stdout, stderr := oncegen(t, mod, "-check", "-migrations", "migrations", "-allow-rename")
	if code != 1 || !strings.Contains(stdout, `+      "name": "app.Greet",`) || !strings.Contains(stdout, `-      "name": "app.Welcome",`) {
		t.Fatalf("-check -allow-rename: exit %d, want 1 with the snapshot's diff\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations", "-allow-rename"); code != 0 {
		t.Fatalf("-allow-rename: exit %d: %s", code, stderr)
	}
	snap, _ := os.ReadFile(snapshot)
	if !strings.Contains(string(snap), `"name": "app.Greet"`) || strings.Contains(string(snap), `"name": "app.Welcome"`) {
		t.Fatalf("the snapshot does not record the rename:\n%s", snap)
	}
	if got := len(filesWith(t, migs, "")); got != files {
		t.Errorf("%d files in migrations, want %d: a rename needs no migration", got, files)
	}
	for _, args := range [][]string{{"-migrations", "migrations"}, {"-check", "-migrations", "migrations"}} {
		if code, stdout, stderr := oncegen(t, mod, args...); code != 0 {
			t.Fatalf("oncegen %v after an accepted rename: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}

	// The table= guard renamed: same kind, same columns, no report, no migration.
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(strings.ReplaceAll(renamed, "Enqueue", "Queue")), 0o644)
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("a table= guard renamed: exit %d: %s", code, stderr)
	}
	snap, _ = os.ReadFile(snapshot)
	if !strings.Contains(string(snap), `"name": "app.Queue"`) || !strings.Contains(string(snap), `"table": "jobs"`) {
		t.Fatalf("the snapshot does not record the table= guard's new name:\n%s", snap)
	}
	if got := len(filesWith(t, migs, "")); got != files {
		t.Errorf("%d files in migrations, want %d", got, files)
	}
}

func names(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// verify passes on a database migrated with psql, fails naming a dropped index, and
// reports an INVALID index left by a failed concurrent build.
func TestVerify_PassesThenNamesWhatIsMissingOrInvalid(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc, "schema.sql": "CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, status text NOT NULL);\n"})
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	db := pgtest.NewDatabase(t)
	code, stdout, stderr := oncegen(t, mod, "verify", "-db", db.URL)
	if code != 1 || !strings.Contains(stderr, "missing, INVALID or different") ||
		!strings.Contains(stdout, "once's tables are at schema step 0 (this runtime's latest: "+strconv.Itoa(onceschema.LatestStep())+")") {
		t.Fatalf("verify on an empty database: exit %d: %s%s", code, stdout, stderr)
	}
	if out, err := psql(db.URL, filepath.Join(mod, "schema.sql")); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, f := range filesWith(t, filepath.Join(mod, "migrations"), ".up.sql") {
		if out, err := psql(db.URL, f); err != nil {
			t.Fatalf("%s: %v: %s", f, err, out)
		}
	}
	code, stdout, stderr = oncegen(t, mod, "verify", db.URL, "./...")
	if code != 0 || !strings.Contains(stdout, "schema step "+strconv.Itoa(onceschema.LatestStep())+" ") {
		t.Fatalf("verify after the migrations: exit %d\n%s%s", code, stdout, stderr)
	}

	if out, err := psqlCommand(db.URL, "DROP INDEX jobs_dedupe_key_once_open"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	code, stdout, _ = oncegen(t, mod, "verify", "-db", db.URL)
	if code != 1 || !strings.Contains(stdout, "missing: index jobs_dedupe_key_once_open on public.jobs\n  relied on by: app.Enqueue") {
		t.Fatalf("verify after dropping the index: exit %d\n%s", code, stdout)
	}

	// Two open rows with one key: the concurrent build fails and leaves an INVALID index,
	// which the migration's own re-run must not take for a good one.
	if out, err := psqlCommand(db.URL, "INSERT INTO jobs (dedupe_key, status) VALUES ('k', 'pending'), ('k', 'running')"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	index := filesWith(t, filepath.Join(mod, "migrations"), "jobs_dedupe_key_once_open.up.sql")[0]
	if out, err := psql(db.URL, index); err == nil {
		t.Fatalf("the index built over duplicates: %s", out)
	}
	code, stdout, _ = oncegen(t, mod, "verify", "-db", db.URL)
	if code != 1 || !strings.Contains(stdout, "INVALID: index jobs_dedupe_key_once_open on public.jobs") {
		t.Fatalf("verify with an INVALID index: exit %d\n%s", code, stdout)
	}
	if out, err := psql(db.URL, index); err == nil || !strings.Contains(string(out), "already exists") {
		t.Fatalf("re-running the migration over the INVALID index: %v\n%s", err, out)
	}
}

// A module that pins oncegen with go.mod's tool line generates with go generate.
func TestGoGenerate_ToolLine(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{
		"gen.go":     "package e2e\n\n//go:generate go tool oncegen\n",
		"app/app.go": appSrc,
	})
	// go get -tool would ask the module proxy about this checkout; the edit is the same line.
	if out, err := goCmd(mod, "mod", "edit", "-tool=github.com/oncekit/once/cmd/oncegen").CombinedOutput(); err != nil {
		t.Fatalf("go mod edit -tool: %v\n%s", err, out)
	}
	if out, err := goCmd(mod, "mod", "tidy").CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	gomod, _ := os.ReadFile(filepath.Join(mod, "go.mod"))
	if !strings.Contains(string(gomod), "tool github.com/oncekit/once/cmd/oncegen") {
		t.Fatalf("go.mod has no tool line:\n%s", gomod)
	}
	if out, err := goCmd(mod, "generate", ".").CombinedOutput(); err != nil {
		t.Fatalf("go generate: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(mod, "app", "once_gen.go")); err != nil {
		t.Fatalf("go generate wrote no wrapper: %v", err)
	}
	if out, err := goCmd(mod, "build", "./...").CombinedOutput(); err != nil {
		t.Fatalf("the generated module does not build: %v\n%s", err, out)
	}
}

// uniqueIndexes lists the valid unique indexes on jobs other than its primary key.
func uniqueIndexes(t *testing.T, url string) string {
	t.Helper()
	out, err := psqlCommand(url, `SELECT coalesce(string_agg(c.relname, ',' ORDER BY c.relname), '') FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'jobs'::regclass AND i.indisunique AND i.indisvalid AND NOT i.indisprimary`)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// A changed key is expanded, then contracted: the new unique index is built (concurrently,
// in a file of its own) before a later file drops the old one, so at no point between files
// is the table without one, going up or coming down. A changed predicate (open= values)
// keeps the index's name: the new one is built under a temporary name and renamed once the
// old one is gone. Applied with psql, the new index reads back as emitted (verify passes),
// the generated conflict clause infers it, and the down parts bring back the old one.
func TestMigrations_ChangedKeyBuildsTheNewIndexBeforeDroppingTheOld(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc, "schema.sql": "CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, payload text, status text NOT NULL);\n"})
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	db := pgtest.NewDatabase(t)
	migs := filepath.Join(mod, "migrations")
	applied := map[string]bool{}
	indexed := false // once jobs has had a unique index, it must never be without one
	up := func() {
		t.Helper()
		for _, f := range filesWith(t, migs, ".up.sql") {
			if applied[f] {
				continue
			}
			if out, err := psql(db.URL, f); err != nil {
				t.Fatalf("%s: %v: %s", filepath.Base(f), err, out)
			}
			applied[f] = true
			got := uniqueIndexes(t, db.URL)
			if indexed && got == "" {
				t.Fatalf("after %s jobs has no unique index", filepath.Base(f))
			}
			indexed = indexed || got != ""
		}
	}
	if out, err := psql(db.URL, filepath.Join(mod, "schema.sql")); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	up()

	// The predicate changes: same name, so a temporary one, then a rename.
	changed := strings.Replace(appSrc, "open=pending,running", "open=pending", 1)
	if err := os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	want := append(stepFiles(".up.sql"), appFile(1, "jobs_dedupe_key_once_open.up.sql"),
		appFile(2, "jobs_dedupe_key_once_open_next.up.sql"), appFile(3, "drop_jobs_dedupe_key_once_open.up.sql"), appFile(4, "once_contract.up.sql"))
	if got := names(filesWith(t, migs, ".up.sql")); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("up migrations %v, want %v", got, want)
	}
	up()
	if code, stdout, stderr := oncegen(t, mod, "verify", "-db", db.URL); code != 0 {
		t.Fatalf("verify after the change: exit %d\n%s%s", code, stdout, stderr)
	}
	clause := "ON CONFLICT (dedupe_key) WHERE status IN ('pending') DO NOTHING"
	gen, err := os.ReadFile(filepath.Join(mod, "app", "once_gen.go"))
	if err != nil || !strings.Contains(string(gen), `const EnqueueConflict = "`+clause+`"`) {
		t.Fatalf("the generated conflict clause is not %q (%v)", clause, err)
	}
	for range 2 {
		if out, err := psqlCommand(db.URL, "INSERT INTO jobs (dedupe_key, status) VALUES ('k', 'pending') "+clause); err != nil {
			t.Fatalf("the conflict clause does not infer the new index: %v: %s", err, out)
		}
	}
	if out, err := psqlCommand(db.URL, "SELECT count(*) FROM jobs"); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("two inserts of one key under the conflict clause: %s rows (%v), want 1", out, err)
	}

	// The columns change: a new name, built before the old one is dropped.
	changed = strings.Replace(changed, "columns=dedupe_key", "columns=dedupe_key,payload", 1)
	if err := os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	want = append(want, appFile(5, "jobs_dedupe_key_payload_once_open.up.sql"), appFile(6, "drop_jobs_dedupe_key_once_open.up.sql"))
	if got := names(filesWith(t, migs, ".up.sql")); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("up migrations %v, want %v", got, want)
	}
	up()
	if got := uniqueIndexes(t, db.URL); got != "jobs_dedupe_key_payload_once_open" {
		t.Fatalf("after the columns changed, unique indexes %q", got)
	}
	if code, stdout, stderr := oncegen(t, mod, "verify", "-db", db.URL); code != 0 {
		t.Fatalf("verify after the columns changed: exit %d\n%s%s", code, stdout, stderr)
	}

	// Down, one file at a time, to the first declaration: never without a unique index.
	downs := filesWith(t, migs, ".down.sql")
	slices.Reverse(downs)
	for _, f := range downs[:5] {
		if out, err := psql(db.URL, f); err != nil {
			t.Fatalf("%s: %v: %s", filepath.Base(f), err, out)
		}
		if got := uniqueIndexes(t, db.URL); got == "" {
			t.Fatalf("after %s jobs has no unique index", filepath.Base(f))
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(appSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := oncegen(t, mod, "verify", "-db", db.URL); code != 0 {
		t.Fatalf("verify of the first declaration after five down parts: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, f := range downs[5:] {
		if out, err := psql(db.URL, f); err != nil {
			t.Fatalf("%s: %v: %s", filepath.Base(f), err, out)
		}
	}
	// Every down run: no index of oncegen's is left, and once's tables are kept.
	out, err := psqlCommand(db.URL, "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'jobs_%once%' UNION ALL SELECT 'no once.operations' WHERE to_regclass('once.operations') IS NULL")
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("left after every down part: %v: %q", err, out)
	}
}

// stepFiles names the migrations of the runtime's schema steps, the first files oncegen
// writes into a fresh directory, with each of exts in turn per step (in the order ls sorts).
func stepFiles(exts ...string) []string {
	var out []string
	for _, st := range onceschema.Steps() {
		for _, ext := range exts {
			out = append(out, fmt.Sprintf("%04d_once_schema_%04d_%s%s", st.Number, st.Number, st.Name, ext))
		}
	}
	return out
}

// appFile names the i-th migration of the application's own, numbered after the steps.
func appFile(i int, rest string) string {
	return fmt.Sprintf("%04d_%s", onceschema.LatestStep()+i, rest)
}

// -check without -migrations checks, besides the wrappers, the migrations each //go:generate
// line running oncegen would write, in its directory and with its own flags: a runtime step
// the snapshot lacks (a newer runtime) and a new guard's constraint are both reported, a line
// not at the start of its line is not read (as go generate reads none), and a line oncegen
// would refuse is an input error at its position.
func TestCheck_ReadsTheMigrationsOfGoGenerateLines(t *testing.T) {
	t.Parallel()
	const line = "//go:generate go tool oncegen -migrations migrations -format goose .\n"
	mod := newModule(t, map[string]string{
		"app/app.go": appSrc,
		"app/gen.go": "package app\n\n" + line + "\nfunc init() {\n\t//go:generate oncegen -migrations elsewhere\n}\n",
	})
	migs := filepath.Join(mod, "app", "migrations")
	// What go generate would run in app/.
	if code, _, stderr := oncegen(t, mod, "-migrations", "app/migrations", "-format", "goose", "./app"); code != 0 {
		t.Fatalf("oncegen: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := oncegen(t, mod, "-check"); code != 0 {
		t.Fatalf("-check after generating: exit %d\n%s%s", code, stdout, stderr)
	}

	// The runtime has a step the snapshot lacks: take the newest step out of the snapshot and
	// its files away, as they were before the runtime grew it.
	last := onceschema.Steps()[onceschema.LatestStep()-1]
	snapPath := filepath.Join(migs, "oncegen.snapshot.json")
	snap, err := os.ReadFile(snapPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(snap, &doc); err != nil {
		t.Fatal(err)
	}
	objs := doc["objects"].([]any)
	kept := objs[:0]
	for _, o := range objs {
		if o.(map[string]any)["id"] != fmt.Sprintf("runtime:step:%04d", last.Number) {
			kept = append(kept, o)
		}
	}
	if len(kept) != len(objs)-1 {
		t.Fatalf("the snapshot has no object for step %d", last.Number)
	}
	doc["objects"] = kept
	if snap, err = json.MarshalIndent(doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(snapPath, snap, 0o644)
	stepFile := fmt.Sprintf("_once_schema_%04d_%s.sql", last.Number, last.Name) // goose: up and down in one file
	for _, f := range filesWith(t, migs, "") {
		if strings.Contains(f, fmt.Sprintf("_once_schema_%04d_", last.Number)) {
			os.Remove(f)
		}
	}
	code, stdout, stderr := oncegen(t, mod, "-check")
	if code != 1 || !strings.Contains(stdout, "+++ b/app/migrations/") || !strings.Contains(stdout, stepFile) {
		t.Fatalf("-check with a runtime step the migrations lack: exit %d, want 1 with the step's file\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := oncegen(t, filepath.Join(mod, "app"), "-migrations", "migrations", "-format", "goose", "."); code != 0 {
		t.Fatalf("oncegen: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := oncegen(t, mod, "-check"); code != 0 {
		t.Fatalf("-check after writing the step: exit %d\n%s%s", code, stdout, stderr)
	}

	// A new guard's constraint, its wrapper regenerated but not its migrations.
	added := appSrc + `
// Charge records a charge once for ever.
//
//once:forever table=charges columns=order_id
func Charge(ctx context.Context, tx pgx.Tx, order string) error { return nil }
`
	os.WriteFile(filepath.Join(mod, "app", "app.go"), []byte(added), 0o644)
	if code, _, stderr := oncegen(t, mod); code != 0 {
		t.Fatalf("oncegen: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = oncegen(t, mod, "-check")
	if code != 1 || !strings.Contains(stdout, "_charges_order_id_once_forever.sql\n") {
		t.Fatalf("-check with a new guard's constraint due: exit %d, want 1 with its file\n%s%s", code, stdout, stderr)
	}

	// A line oncegen would refuse.
	os.WriteFile(filepath.Join(mod, "app", "gen.go"), []byte("package app\n\n//go:generate go tool oncegen -migrations migrations -format yaml .\n"), 0o644)
	code, _, stderr = oncegen(t, mod, "-check")
	if code != 2 || !strings.Contains(stderr, "gen.go:3:1: //go:generate oncegen: ") || !strings.Contains(stderr, `unknown -format "yaml"`) {
		t.Fatalf("-check with a bad go:generate line: exit %d, want 2 naming it\n%s", code, stderr)
	}
}
