package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
)

// The squawk-ignore comments in a CONCURRENTLY file give reasons; each still holds.
//
//   - prefer-robust-stmts, "no IF NOT EXISTS: an INVALID index left by a failed build must
//     stop this file, not pass for a valid one": a build over duplicate keys fails and leaves
//     an INVALID index, and applying the file again fails too.
//   - require-lock-timeout, require-statement-timeout, "CONCURRENTLY takes only a SHARE
//     UPDATE EXCLUSIVE lock, which no read or write waits behind, and a timeout would stop it
//     half-way, leaving an INVALID index": while a build waits on an open transaction, reads
//     and writes of the table go on; a statement timeout then stops it and leaves the index
//     INVALID.
func TestSquawkIgnore_ConcurrentFilesReasonsStillHold(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc})
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	// Found by name: the runtime's schema steps come first and take the numbers before it.
	matches, err := filepath.Glob(filepath.Join(mod, "migrations", "[0-9][0-9][0-9][0-9]_jobs_dedupe_key_once_open.up.sql"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("the CONCURRENTLY file of jobs_dedupe_key_once_open: %v %v", matches, err)
	}
	file := matches[0]
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-- squawk-ignore prefer-robust-stmts\nCREATE UNIQUE INDEX CONCURRENTLY jobs_dedupe_key_once_open ",
		"-- squawk-ignore-file require-lock-timeout, require-statement-timeout\n"} {
		if !strings.Contains(string(src), want) {
			t.Fatalf("%s does not hold %q:\n%s", filepath.Base(file), want, src)
		}
	}
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 4)
	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	invalid := func() bool {
		t.Helper()
		var valid *bool
		pool.QueryRow(ctx, "SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('public.jobs_dedupe_key_once_open')").Scan(&valid)
		return valid != nil && !*valid
	}
	exec("CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, status text NOT NULL)")
	exec("INSERT INTO jobs (dedupe_key, status) VALUES ('k', 'pending'), ('k', 'pending')")
	if out, err := psql(db.URL, file); err == nil {
		t.Fatalf("a build over duplicate keys succeeded: %s", out)
	}
	if !invalid() {
		t.Fatal("the failed build left no INVALID index")
	}
	out, err := psql(db.URL, file)
	if err == nil || !strings.Contains(string(out), "already exists") {
		t.Fatalf("applying the file again over the INVALID index: %v %s; want it to stop", err, out)
	}

	// A clean table, a transaction holding it open, and a build with a timeout.
	exec("DROP INDEX CONCURRENTLY public.jobs_dedupe_key_once_open")
	exec("DELETE FROM jobs")
	open, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback(ctx)
	if _, err := open.Exec(ctx, "INSERT INTO jobs (dedupe_key, status) VALUES ('held', 'pending')"); err != nil {
		t.Fatal(err)
	}
	build := make(chan error, 1)
	go func() {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			build <- err
			return
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, "SET statement_timeout = '4s'"); err != nil {
			build <- err
			return
		}
		_, err = conn.Exec(ctx, string(src))
		conn.Exec(ctx, "RESET statement_timeout")
		build <- err
	}()
	// The build is waiting for the open transaction: reads and writes do not wait for it.
	deadline := time.Now().Add(3 * time.Second)
	for !invalid() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !invalid() {
		t.Fatal("the build did not start waiting")
	}
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := pool.Exec(wctx, "INSERT INTO jobs (dedupe_key, status) VALUES ('during', 'pending')"); err != nil {
		t.Errorf("a write while the build waits: %v", err)
	}
	var n int
	if err := pool.QueryRow(wctx, "SELECT count(*) FROM jobs").Scan(&n); err != nil {
		t.Errorf("a read while the build waits: %v", err)
	}
	if err := <-build; err == nil || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("the build under a statement timeout: %v, want it stopped by the timeout", err)
	}
	if !invalid() {
		t.Error("the build stopped by a timeout left no INVALID index")
	}
}

// The squawk-ignore comments in the runtime's step 2 give reasons; each still holds.
//
//   - require-concurrent-index-creation, "it covers only uncertain rows, built in the step's
//     transaction under its lock_timeout": the index is partial on uncertain rows, and while
//     a transaction writing once.operations stays open the step stops at the lock timeout
//     instead of queueing every later read and write behind it; the step then left nothing.
//   - require-concurrent-index-deletion, the same for the drop.
func TestSquawkIgnore_RuntimeStep2ReasonsStillHold(t *testing.T) {
	t.Parallel()
	mod := newModule(t, map[string]string{"app/app.go": appSrc})
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations"); code != 0 {
		t.Fatalf("oncegen: %s", stderr)
	}
	find := func(pattern string) string {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(mod, "migrations", pattern))
		if err != nil || len(m) != 1 {
			t.Fatalf("%s: %v %v", pattern, m, err)
		}
		return m[0]
	}
	step1, step2 := find("*_once_schema_0001_tables.up.sql"), find("*_once_schema_0002_operations_settle_hot.up.sql")
	src, err := os.ReadFile(step2)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for _, want := range []string{"-- squawk-ignore require-concurrent-index-creation\nCREATE INDEX IF NOT EXISTS operations_uncertain ",
		"-- squawk-ignore require-concurrent-index-deletion\nDROP INDEX IF EXISTS once.operations_attention;"} {
		at := strings.Index(text, want)
		if at < 0 {
			t.Fatalf("%s does not hold %q:\n%s", filepath.Base(step2), want, text)
		}
		if lt := strings.Index(text, "lock_timeout"); lt < 0 || lt > at {
			t.Fatalf("%s sets no lock_timeout before %q:\n%s", filepath.Base(step2), want, text)
		}
	}
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 2)
	if out, err := psql(db.URL, step1); err != nil {
		t.Fatalf("step 1: %v %s", err, out)
	}
	// A transaction writing the table stays open: the step must stop at its lock timeout.
	open, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.Exec(ctx, "LOCK TABLE once.operations IN ROW EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := psql(db.URL, step2)
	if err == nil || !strings.Contains(string(out), "lock timeout") {
		t.Fatalf("step 2 behind an open writer: %v %s; want it stopped by the lock timeout", err, out)
	}
	if waited := time.Since(start); waited > 30*time.Second {
		t.Errorf("step 2 waited %v behind the open writer", waited)
	}
	open.Rollback(ctx)
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM once.schema_steps WHERE step = 2").Scan(&n); err != nil || n != 0 {
		t.Fatalf("step 2 recorded after its lock timeout: %d %v", n, err)
	}
	// Unblocked, it applies, and the index it builds holds only uncertain rows.
	if out, err := psql(db.URL, step2); err != nil {
		t.Fatalf("step 2: %v %s", err, out)
	}
	var def string
	if err := pool.QueryRow(ctx, "SELECT pg_get_indexdef('once.operations_uncertain'::regclass)").Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "WHERE (uncertain_since IS NOT NULL)") {
		t.Errorf("operations_uncertain is %s, want it partial on uncertain rows", def)
	}
}
