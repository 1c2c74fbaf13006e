package onceui_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceops"
	"github.com/oncekit/once/runtime/onceschema"
)

// overviewTables returns the overview's guard table and chart of a window, as text.
func overviewTables(t *testing.T, b *browser, window string) (guards, chart string) {
	t.Helper()
	code, body := b.get(base + "/?window=" + window)
	if code != 200 {
		t.Fatalf("overview %s: %d\n%s", window, code, body)
	}
	tbody := regexp.MustCompile(`(?s)<tbody>.*?</tbody>`).FindString(body)
	svg := regexp.MustCompile(`(?s)<svg[^>]*aria-label="operations done per day".*?</svg>`).FindString(body)
	if tbody == "" || svg == "" {
		t.Fatalf("overview %s has no table or chart:\n%s", window, body)
	}
	return tbody, svg
}

// The overview counts the same calls whether its days are rolled up or counted live: claims
// of forever and open guards spread over ten days, in every state, shown for windows of one,
// three and thirty days before and after a roll-up. After it, the rolled-up days are read
// from their roll-ups: deleting a rolled-up day's claims changes no count (the negative
// control that the rolled-up path is the one taken), deleting today's does.
func TestOverview_RolledUpDaysCountAsTheirClaims(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDatabase(t).Pool(t, 4)
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`INSERT INTO once.operations (name, scope, key, id, token, attempts, claimed_at, alive_at, settled_at, uncertain_since, state)
SELECT 'guard.' || (i % 3), '', 'key-' || i, gen_random_uuid(), 't', 1 + (i % 4 = 0)::int,
	statement_timestamp() - i * interval '17 minutes', statement_timestamp() - i * interval '17 minutes', NULL,
	CASE WHEN i % 11 = 0 THEN statement_timestamp() END,
	(CASE WHEN i % 11 = 0 THEN 'uncertain' WHEN i % 7 = 0 THEN 'failed' WHEN i % 5 = 0 THEN 'released' WHEN i % 13 = 0 THEN 'open' ELSE 'done' END)::once.operation_state
FROM generate_series(0, 850) i`,
		`INSERT INTO once.open_claims (name, key, state, token, stale_after, opened_at, alive_at, closed_at)
SELECT 'open.' || (i % 2), 'key-' || i, s, 't', interval '1 hour', statement_timestamp() - i * interval '23 minutes',
	statement_timestamp() - i * interval '23 minutes', CASE WHEN s <> 'open' THEN statement_timestamp() END
FROM generate_series(0, 620) i, LATERAL (SELECT CASE WHEN i % 9 = 0 THEN 'open' WHEN i % 5 = 0 THEN 'stale' WHEN i % 4 = 0 THEN 'failed' ELSE 'done' END AS s) st`,
		// Claims done today whatever the hour: just after midnight the series has none.
		`INSERT INTO once.operations (name, scope, key, id, token, attempts, claimed_at, alive_at, settled_at, state)
SELECT 'guard.' || (i % 3), '', 'today-' || i, gen_random_uuid(), 't', 1, statement_timestamp(), statement_timestamp(), statement_timestamp(), 'done'
FROM generate_series(0, 5) i`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	b := newBrowser(t, console(t, pool, true))
	windows := []string{"1d", "3d", "30d"}
	live := map[string][2]string{}
	for _, w := range windows {
		g, c := overviewTables(t, b, w)
		live[w] = [2]string{g, c}
		if !strings.Contains(g, "guard.2") || !strings.Contains(g, "open.1") {
			t.Fatalf("window %s misses a guard:\n%s", w, g)
		}
	}
	days, err := onceops.RollUp(ctx, pool)
	if err != nil || days < 9 {
		t.Fatalf("roll-up: %d days, %v; want the nine or ten closed days", days, err)
	}
	if again, err := onceops.RollUp(ctx, pool); err != nil || again != 0 {
		t.Fatalf("a second roll-up counted %d days (%v), want none", again, err)
	}
	for _, w := range windows {
		g, c := overviewTables(t, b, w)
		if g != live[w][0] || c != live[w][1] {
			t.Fatalf("window %s: rolled up\n%s\n%s\nlive\n%s\n%s", w, g, c, live[w][0], live[w][1])
		}
	}
	if _, body := b.get(base + "/?window=30d"); !strings.Contains(body, "as they stood when rolled up") {
		t.Fatalf("the overview does not say which days are rolled up:\n%s", body)
	}

	// Claims deleted from a rolled-up day (five days ago) are still counted; from today, not.
	// (Uncertain operations are counted live on every day: those stay.)
	for _, sql := range []string{
		`DELETE FROM once.operations WHERE claimed_at < date_trunc('day', statement_timestamp(), 'UTC') - interval '4 days'
	AND claimed_at >= date_trunc('day', statement_timestamp(), 'UTC') - interval '5 days' AND state <> 'uncertain'`,
		`DELETE FROM once.open_claims WHERE opened_at < date_trunc('day', statement_timestamp(), 'UTC') - interval '4 days'
	AND opened_at >= date_trunc('day', statement_timestamp(), 'UTC') - interval '5 days' AND state <> 'open'`,
	} {
		if tag, err := pool.Exec(ctx, sql); err != nil || tag.RowsAffected() == 0 {
			t.Fatalf("%v (%d rows)\n%s", err, tag.RowsAffected(), sql)
		}
	}
	if g, c := overviewTables(t, b, "30d"); g != live["30d"][0] || c != live["30d"][1] {
		t.Fatalf("the rolled-up counts changed with the claims deleted:\n%s\nwas\n%s", g, live["30d"][0])
	}
	if tag, err := pool.Exec(ctx, `DELETE FROM once.operations WHERE claimed_at >= date_trunc('day', statement_timestamp(), 'UTC') AND state = 'done'`); err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("deleting today's done claims: %v (%d rows)", err, tag.RowsAffected())
	}
	if g, _ := overviewTables(t, b, "30d"); g == live["30d"][0] {
		t.Fatalf("today's deleted claims are still counted: today is not counted live\n%s", g)
	}
}
