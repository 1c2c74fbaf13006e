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
