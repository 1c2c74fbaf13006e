package onceui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceops"
	"github.com/oncekit/once/runtime/onceschema"
	"github.com/oncekit/once/runtime/onceui"
)

// fillMillion fills once.operations with a million rows over 60 days of 20 guards and 1000
// scopes (one in a thousand uncertain, one in a hundred open, the rest settled), and the
// other tables with a hundred thousand rows each, then vacuums and analyzes them as
// autovacuum would after so many inserts (the vacuum also summarizes the BRIN ranges).
func fillMillion(b *testing.B, pool *pgxpool.Pool) {
	b.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO once.operations (name, scope, key, id, token, attempts, claimed_at, alive_at, settled_at, uncertain_since, error, result, state)
SELECT 'guard.' || (i % 20), 'acct-' || (i % 1000), 'key-' || i, gen_random_uuid(), 't', 1 + (i % 7 = 0)::int,
	now() - i * interval '5184 ms', now() - i * interval '5184 ms',
	CASE WHEN i % 100 = 1 THEN NULL ELSE now() - i * interval '5184 ms' + interval '1 s' END,
	CASE WHEN i % 1000 = 0 THEN now() - i * interval '5184 ms' END,
	CASE WHEN i % 1000 = 0 THEN 'connection reset' END,
	CASE WHEN i % 1000 <> 0 AND i % 100 <> 1 THEN '{"charge":"ch_1"}'::json END,
	(CASE WHEN i % 1000 = 0 THEN 'uncertain' WHEN i % 100 = 1 THEN 'open' ELSE 'done' END)::once.operation_state
FROM generate_series(1, 1000000) i`,
		`INSERT INTO once.open_claims (name, key, state, token, stale_after, opened_at, alive_at, closed_at, reason)
SELECT 'open.' || (i % 10), 'key-' || i, CASE WHEN i % 50 = 0 THEN 'open' ELSE 'done' END, 't', interval '20 minutes',
	now() - i * interval '1 s', now() - i * interval '1 s', CASE WHEN i % 50 <> 0 THEN now() END, NULL
FROM generate_series(1, 100000) i`,
		`INSERT INTO once.latches (name, key, fired_at, firings, token)
SELECT 'episode.' || (i % 10), 'key-' || i, CASE WHEN i % 10 = 0 THEN now() - i * interval '1 s' END, 1 + i % 3, 't'
FROM generate_series(1, 100000) i`,
		`INSERT INTO once.counter_slots (name, key, slot, token)
SELECT 'statement.' || (i % 10), 'org-' || (i / 10), i % 10, 't' FROM generate_series(1, 100000) i`,
		`INSERT INTO once.leases (name, key, holder, fence, acquired_at, expires_at, released_at, released_by)
SELECT 'lease.' || (i % 10), 'key-' || i, 'h' || i, 1 + i % 5, now() - interval '1 minute', now() + interval '1 hour',
	CASE WHEN i % 20 <> 0 THEN now() END, CASE WHEN i % 20 <> 0 THEN 'holder' END
FROM generate_series(1, 100000) i`,
		`INSERT INTO once.followups (operation_id, operation, scope, key, action, provider_key, state, attempts, last_error, delivered_at)
SELECT gen_random_uuid(), 'guard.' || (i % 20), 'acct-' || (i % 1000), 'key-' || i, 'email', 'pk' || i,
	CASE WHEN i % 1000 = 0 THEN 'dead' WHEN i % 100 = 0 THEN 'pending' ELSE 'delivered' END, 1, NULL,
	CASE WHEN i % 100 <> 0 THEN now() END
FROM generate_series(1, 100000) i`,
		`INSERT INTO once.ledger (operation_id, operation, scope, key, kind, unit, quantity)
SELECT id, name, scope, key, 'cost', 'usd_micros', 1000 FROM once.operations WHERE key = 'key-500'`,
		`INSERT INTO once.audit (actor, action, target, reason)
SELECT 'ana', 'resolve done', 'operation ' || gen_random_uuid(), 'checked' FROM generate_series(1, 10000)`,
		`VACUUM ANALYZE`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			b.Fatalf("filling: %v\n%s", err, sql)
		}
	}
}

// BenchmarkConsole_MillionOperations times every page through the handler with a million
// rows in once.operations, and beside each the bare SQL of its main query (the page's cost
// over the database's), logging each query's plan. The overview is timed first before any
// roll-up (every claim of the window counted live), then after onceops.RollUp.
//
//	go test -run '^$' -bench Console_Million -benchtime 20x ./runtime/onceui
func BenchmarkConsole_MillionOperations(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.NewDatabase(b).Pool(b, 4)
	if err := onceschema.Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	fillMillion(b, pool)
	b.Logf("filled in %v", time.Since(start).Round(time.Millisecond))
	var uncertainID, scope string
	if err := pool.QueryRow(ctx, `SELECT id::text, scope FROM once.operations WHERE key = 'key-500000'`).Scan(&uncertainID, &scope); err != nil {
		b.Fatal(err)
	}
	h, err := onceui.New(onceui.Config{DB: pool, BasePath: "/once", User: func(*http.Request) string { return "ana" }})
	if err != nil {
		b.Fatal(err)
	}
	overviewSQL := func(days int) string {
		return `SELECT name, day, calls, done, failed, released, in_flight, retried FROM once.guard_days
WHERE kind = 'forever' AND day >= (statement_timestamp() AT TIME ZONE 'UTC')::date - ` + strconv.Itoa(days-1) + `
	AND day < (statement_timestamp() AT TIME ZONE 'UTC')::date
UNION ALL
SELECT name, (claimed_at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE state = 'done'), 0, 0, 0, 0
FROM once.operations WHERE (claimed_at >= statement_timestamp() - interval '` + strconv.Itoa(days) + ` days'
	AND claimed_at < date_trunc('day', statement_timestamp(), 'UTC') - interval '` + strconv.Itoa(days-1) + ` days')
	OR claimed_at >= date_trunc('day', statement_timestamp(), 'UTC') GROUP BY 1, 2`
	}
	page := func(b *testing.B, path string) {
		for b.Loop() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != 200 {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
	}
	b.Run("overview-7d-unrolled/page", func(b *testing.B) { page(b, "/once/?window=7d") })
	start = time.Now()
	days, err := onceops.RollUp(ctx, pool)
	if err != nil || days < 60 {
		b.Fatalf("roll-up: %d days, %v", days, err)
	}
	b.Logf("rolled up %d days in %v", days, time.Since(start).Round(time.Millisecond))
	var after string
	{
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/once/uncertain", nil))
		i := strings.Index(rec.Body.String(), `href="?`)
		if i < 0 {
			b.Fatal("the uncertain page has no next page")
		}
		after = rec.Body.String()[i+7:]
		after = strings.ReplaceAll(after[:strings.IndexByte(after, '"')], "&amp;", "&")
	}
	for _, p := range []struct{ name, path, sql string }{
		{"overview-7d", "/once/?window=7d", overviewSQL(7)},
		{"overview-1d", "/once/?window=1d", overviewSQL(1)},
		{"overview-60d", "/once/?window=60d", overviewSQL(60)},
		{"uncertain", "/once/uncertain", `SELECT * FROM once.operations WHERE uncertain_since IS NOT NULL AND state = 'uncertain' AND uncertain_since <= clock_timestamp() AND (uncertain_since, id) > ('-infinity', '00000000-0000-0000-0000-000000000000') ORDER BY uncertain_since, id LIMIT 51`},
		{"uncertain-page2", "/once/uncertain?" + after, ``},
		{"uncertain-filtered", "/once/uncertain?name=guard.0&scope=" + scope + "&age=1d", `SELECT * FROM once.operations WHERE uncertain_since IS NOT NULL AND state = 'uncertain' AND name = 'guard.0' AND scope = '` + scope + `' AND uncertain_since <= clock_timestamp() - interval '1 day' ORDER BY uncertain_since, id LIMIT 51`},
		{"operation", "/once/operation?name=guard.0&scope=" + url.QueryEscape(scope) + "&key=key-500000", `SELECT * FROM once.operations WHERE name = 'guard.0' AND scope = '` + scope + `' AND key = 'key-500000'`},
		{"claims", "/once/claims", `SELECT * FROM once.open_claims WHERE state = 'open' AND (name, key) > ('', '') ORDER BY name, key LIMIT 51`},
		{"latches", "/once/latches", `SELECT * FROM once.latches WHERE fired_at IS NOT NULL AND (name, key) > ('', '') ORDER BY name, key LIMIT 51`},
		{"allowances", "/once/allowances", `SELECT name, key, count(*) FROM once.counter_slots WHERE (name, key) > ('', '') GROUP BY name, key ORDER BY name, key LIMIT 51`},
		{"leases", "/once/leases", `SELECT * FROM once.leases WHERE released_at IS NULL AND (name, key) > ('', '') ORDER BY name, key LIMIT 51`},
		{"followups", "/once/followups?state=dead", `SELECT * FROM once.followups WHERE state = 'dead' AND id > 0 ORDER BY id LIMIT 51`},
		{"audit", "/once/audit", `SELECT * FROM once.audit ORDER BY id DESC LIMIT 51`},
	} {
		if p.sql != "" {
			rows, err := pool.Query(ctx, "EXPLAIN (COSTS OFF) "+p.sql)
			if err != nil {
				b.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var line string
				rows.Scan(&line)
				plan = append(plan, strings.TrimSpace(line))
			}
			rows.Close()
			b.Logf("%s plan: %s", p.name, strings.Join(plan, " | "))
		}
		b.Run(p.name+"/page", func(b *testing.B) { page(b, p.path) })
		if p.sql != "" {
			b.Run(p.name+"/sql", func(b *testing.B) {
				for b.Loop() {
					rows, err := pool.Query(ctx, p.sql)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
					}
					rows.Close()
				}
			})
		}
	}
}
