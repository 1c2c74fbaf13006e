package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

// A table= unique index applied to a table that already holds duplicate keys: the build
// fails and leaves the index INVALID, and the file's comment says how to go on. Its query
// lists exactly the keys that stop the build (rows outside a partial index's predicate, and
// rows with a null in a key that is not NULLS NOT DISTINCT, are not duplicates); its DROP
// statement, the duplicates resolved, and the file applied again leave a valid index.
func TestMigrations_UniqueIndexOverDuplicatesNamesTheKeysThatStopIt(t *testing.T) {
	t.Parallel()
	const src = `package app

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Enqueue queues a job while none with its key is open.
//
//once:open table=jobs columns=dedupe_key status=status open=pending,running
func Enqueue(ctx context.Context, tx pgx.Tx, key string) error { return nil }

// Charge records an org's charge for a day.
//
//once:forever table=charges columns=org_id,day
func Charge(ctx context.Context, tx pgx.Tx, org int64, day string) error { return nil }
`
	mod := newModule(t, map[string]string{"app/app.go": src})
	if code, _, stderr := oncegen(t, mod, "-migrations", "migrations", "-format", "migrate"); code != 0 {
		t.Fatalf("oncegen: exit %d\n%s", code, stderr)
	}
	db := pgtest.NewDatabase(t)
	run := func(sql string) string {
		t.Helper()
		out, err := psqlCommand(db.URL, sql)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(`CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, status text NOT NULL);
INSERT INTO jobs (dedupe_key, status) VALUES ('a', 'pending'), ('a', 'pending'), ('b', 'running'), ('b', 'pending'),
	('c', 'done'), ('c', 'done'), ('c', 'pending'), ('d', 'pending');
CREATE TABLE charges (org_id bigint, day text);
INSERT INTO charges VALUES (1, 'mon'), (1, 'mon'), (1, NULL), (1, NULL), (NULL, NULL), (NULL, NULL), (2, 'mon');`)

	for _, c := range []struct {
		index, table string
		dups         []string // psql -tA rows: key columns, count
		resolve      string
	}{
		{"jobs_dedupe_key_once_open", "jobs", []string{"a|2", "b|2"},
			"DELETE FROM jobs WHERE id IN (SELECT max(id) FROM jobs WHERE status IN ('pending', 'running') GROUP BY dedupe_key HAVING count(*) > 1)"},
		{"charges_org_id_day_once_forever", "charges", []string{"1|mon|2"},
			"DELETE FROM charges WHERE ctid = (SELECT max(ctid) FROM charges WHERE org_id = 1 AND day = 'mon')"},
	} {
		files, err := filepath.Glob(filepath.Join(mod, "migrations", "*_"+c.index+".up.sql"))
		if err != nil || len(files) != 1 {
			t.Fatalf("the file of %s: %v %v", c.index, files, err)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		out, err := psql(db.URL, files[0])
		if err == nil || !strings.Contains(string(out), "could not create unique index") {
			t.Fatalf("%s over duplicate keys: %v\n%s; want the build to fail", c.index, err, out)
		}
		if valid := run("SELECT indisvalid FROM pg_index WHERE indexrelid = 'public." + c.index + "'::regclass"); valid != "f" {
			t.Fatalf("%s after the failed build: indisvalid %q, want an INVALID index", c.index, valid)
		}

		query := commentAfter(t, text, "-- resolve the duplicate keys, which this query lists with how many rows hold each:")
		want := "SELECT " + map[string]string{"jobs": "dedupe_key", "charges": "org_id, day"}[c.table] + ", count(*) FROM public." + c.table
		if !strings.HasPrefix(query, want) || !strings.HasSuffix(query, "HAVING count(*) > 1;") {
			t.Errorf("%s's query: %s", c.index, query)
		}
		got := strings.Split(run(query+"\n"), "\n")
		slices.Sort(got)
		if !slices.Equal(got, c.dups) {
			t.Errorf("%s's query lists %q, want exactly the duplicate keys %q\n%s", c.index, got, c.dups, query)
		}

		// The way on the comment gives: drop, resolve, apply again.
		drop := commentAfter(t, text, "-- drop the INVALID index:")
		if drop != "DROP INDEX CONCURRENTLY IF EXISTS public."+c.index+";" {
			t.Errorf("%s's drop statement: %s", c.index, drop)
		}
		run(drop)
		run(c.resolve)
		if rows := run(query); rows != "" {
			t.Fatalf("%s: duplicates left after resolving: %s", c.index, rows)
		}
		if out, err := psql(db.URL, files[0]); err != nil {
			t.Fatalf("%s applied again after the duplicates were resolved: %v\n%s", c.index, err, out)
		}
		if valid := run("SELECT indisvalid FROM pg_index WHERE indexrelid = 'public." + c.index + "'::regclass"); valid != "t" {
			t.Errorf("%s applied again: indisvalid %q, want a valid index", c.index, valid)
		}
	}
}

// commentAfter returns the statement on the comment line after the line head, without its
// comment marker.
func commentAfter(t *testing.T, text, head string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, head+"\n")
	if !ok {
		t.Fatalf("no line %q in:\n%s", head, text)
	}
	line, _, _ := strings.Cut(rest, "\n")
	stmt, ok := strings.CutPrefix(line, "--   ")
	if !ok {
		t.Fatalf("the line after %q is %q, not an indented statement", head, line)
	}
	return stmt
}
