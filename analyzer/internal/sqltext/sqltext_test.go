package sqltext_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// An upsert is read for what decides its outcome: whether it can refuse (a WHERE on the
// DO UPDATE) and whether the row it leaves depends on how many calls got there (a column
// set from its own value).
func TestParse_Upserts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sql                              string
		upsert, updateWhere, accumulates bool
	}{
		{`INSERT INTO spend (account_id, used) VALUES ($1, $2)
			ON CONFLICT (account_id) DO UPDATE SET used = spend.used + excluded.used`, true, false, true},
		{`insert into spend as s (account_id, used) values ($1, $2)
			on conflict (account_id) do update set used = s.used + excluded.used
			where s.used + excluded.used <= $3 returning used`, true, true, true},
		{`INSERT INTO counters (k, n) VALUES ($1, 1) ON CONFLICT (k) DO UPDATE SET n = n + 1 RETURNING n`, true, false, true},
		{`INSERT INTO wallets (id, balance) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET balance = wallets.balance - $2`, true, false, true},
		{`INSERT INTO tags (id, list) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET list = tags.list || excluded.list`, true, false, true},
		{`INSERT INTO settings (id, plan) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET plan = excluded.plan, updated_at = now()`, true, false, false},
		{`INSERT INTO seen (id, at) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET at = greatest(seen.at, excluded.at)`, true, false, false},
		{`INSERT INTO runs (org_id) VALUES ($1) ON CONFLICT (org_id) WHERE status = 'open' DO NOTHING`, false, false, false},
		{`INSERT INTO notes (id, body) VALUES ($1, 'a + b') ON CONFLICT (id) DO UPDATE SET body = excluded.body -- body = body + 1`, true, false, false},
	} {
		st := sqltext.Parse(tc.sql)
		if st.Kind != sqltext.Insert || !st.OnConflict {
			t.Errorf("%s: kind %v, on conflict %v; want an insert with ON CONFLICT", tc.sql, st.Kind, st.OnConflict)
			continue
		}
		if st.Upsert != tc.upsert || st.UpdateWhere != tc.updateWhere || st.Accumulates != tc.accumulates {
			t.Errorf("%s:\n upsert %v, update where %v, accumulates %v; want %v, %v, %v",
				tc.sql, st.Upsert, st.UpdateWhere, st.Accumulates, tc.upsert, tc.updateWhere, tc.accumulates)
		}
	}
}

// Each kind of statement is told apart, with the table it writes or reads.
func TestParse_Kinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sql   string
		kind  sqltext.Kind
		table string
	}{
		{`SELECT id FROM runs WHERE org_id = $1`, sqltext.Read, "runs"},
		{`WITH open AS (SELECT id FROM runs) SELECT count(*) FROM open`, sqltext.Read, "runs"},
		{`INSERT INTO "public"."runs" (org_id) VALUES ($1)`, sqltext.Insert, "public.runs"},
		{`UPDATE jobs SET state = 'running' WHERE id = (SELECT id FROM jobs WHERE state = 'queued' FOR UPDATE SKIP LOCKED LIMIT 1)`, sqltext.Update, "jobs"},
		{`SELECT pg_advisory_xact_lock($1)`, sqltext.Lock, ""},
		{`LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE`, sqltext.Lock, ""},
		// LOCK is a statement: a column named lock does not make a read a lock.
		{`SELECT id FROM jobs WHERE lock IS NULL AND org_id = $1`, sqltext.Read, "jobs"},
		{`DELETE FROM runs WHERE id = $1`, sqltext.Delete, "runs"},
	} {
		st := sqltext.Parse(tc.sql)
		table := st.Table
		if st.Kind == sqltext.Read {
			table = st.Tables[0]
		}
		if st.Kind != tc.kind || table != tc.table {
			t.Errorf("%s: kind %v, table %q; want %v, %q", tc.sql, st.Kind, table, tc.kind, tc.table)
		}
	}
}

// A read looks for the rows an insert makes when it compares a column the insert sets.
func TestSameRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		read, insert string
		same         bool
	}{
		{`SELECT id FROM paid_actions WHERE account_id = $1 AND action_key = $2`,
			`INSERT INTO paid_actions (account_id, action_key, status) VALUES ($1, $2, 'queued')`, true},
		{`SELECT count(*) FROM runs r WHERE r.org_id = $1 AND r.status IN ('queued', 'running')`,
			`INSERT INTO runs (org_id) VALUES ($1) RETURNING id`, true},
		{`SELECT EXISTS (SELECT 1 FROM subscribers WHERE email = $1)`,
			`INSERT INTO "subscribers" ("email") VALUES ($1)`, true},
		{`SELECT coalesce((SELECT used FROM provider_days WHERE provider = 'places' AND day = $1), 0)`,
			`INSERT INTO provider_days AS d (provider, day, used) VALUES ('places', $1, 1) ON CONFLICT (provider, day) DO UPDATE SET used = d.used + 1`, true},
		{`SELECT count(*) FROM runs`, `INSERT INTO runs (org_id) VALUES ($1)`, true},
		{`SELECT id FROM runs WHERE org_id = $1`, `INSERT INTO runs SELECT * FROM staged_runs`, true},
		{`SELECT account_id, status FROM paid_actions WHERE id = $1`,
			`INSERT INTO paid_actions (account_id, action_key, parent_id) VALUES ($1, $2, $3)`, false},
		{`SELECT locked FROM comments WHERE id = $1 AND NOT deleted`,
			`INSERT INTO comments (parent_id, body) VALUES ($1, $2)`, false},
	} {
		if got := sqltext.SameRows(sqltext.Parse(tc.read), sqltext.Parse(tc.insert)); got != tc.same {
			t.Errorf("SameRows(%q, %q) = %v, want %v", tc.read, tc.insert, got, tc.same)
		}
	}
}

// TestParse_Refuses: the statements whose repeat changes no row (a hand-written latch),
// and their twins a repeat updates again.
func TestParse_Refuses(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want bool
	}{
		{`INSERT INTO task_lock(task_name, lock_until, locked_at) VALUES($1, $2, $3)
		  ON CONFLICT ON CONSTRAINT task_lock_pkey DO UPDATE SET lock_until = $2, locked_at = $3
		  WHERE task_lock.lock_until < $3`, true},
		{`INSERT INTO task_lock(task_name, lock_until) VALUES($1, $2)
		  ON CONFLICT (task_name) DO UPDATE SET lock_until = $2 WHERE task_lock.task_name = $1`, false},
		{`INSERT INTO task_lock(task_name, lock_until) VALUES($1, $2) ON CONFLICT (task_name) DO UPDATE SET lock_until = $2`, false},
		{`INSERT INTO sent(id) VALUES ($1) ON CONFLICT DO NOTHING`, true},
		{`INSERT INTO sent(id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING id`, true},
		{`INSERT INTO sent(id) VALUES ($1)`, false},
		{`SELECT pg_try_advisory_lock($1)`, true},
		{`SELECT pg_advisory_xact_lock($1)`, false},
		{`DELETE FROM otts WHERE email_hash = $1 AND ott = $2`, true},
		{`UPDATE discount_coupons SET claimed_by_user_id = $1, claimed_at = now() WHERE code = $2 AND claimed_by_user_id IS NULL`, true},
		{`UPDATE referral_tracking SET invitee_on_paid_plan = true WHERE invitee_id = $1 and invitee_on_paid_plan = FALSE`, true},
		{`UPDATE jobs SET state = 'sent' WHERE id = $1 AND state = 'pending' RETURNING id`, true},
		{`UPDATE jobs SET state = 'sent' WHERE id = $1 AND state <> 'sent'`, true},
		{`UPDATE jobs SET state = 'sent' WHERE id = $1 AND state = 'sent'`, false},
		{`UPDATE subscriptions SET is_cancelled = true WHERE user_id = $1`, false},
		{`UPDATE emergency_contact SET state=$1 WHERE user_id=$2 and emergency_contact_id=$3 and state = ANY($4)`, false},
		{`UPDATE jobs SET state = $1 WHERE id = $2 AND state = $3`, false},
		{`UPDATE users SET name = $1`, false},
	} {
		if got := sqltext.Parse(c.sql).Refuses; got != c.want {
			t.Errorf("Parse(%q).Refuses = %v, want %v", c.sql, got, c.want)
		}
	}
}

func TestArg_NamesTheArgumentOfAColumn(t *testing.T) {
	st := sqltext.Parse(`INSERT INTO storage_bonus (bonus_id, user_id, storage, created_at) VALUES ($2, $1, $3, now())`)
	for col, want := range map[string]int{"bonus_id": 1, "user_id": 0, "storage": 2} {
		if got, ok := st.Arg(col); !ok || got != want {
			t.Errorf("Arg(%q) = %d, %v; want %d", col, got, ok, want)
		}
	}
	if _, ok := st.Arg("created_at"); ok {
		t.Errorf("Arg(created_at) is a placeholder; want none (now())")
	}
	q := sqltext.Parse(`insert into invites (code, email, team) values (?, 'x', ?)`)
	if got, ok := q.Arg("team"); !ok || got != 1 {
		t.Errorf("Arg(team) = %d, %v; want 1", got, ok)
	}
	if _, ok := q.Arg("email"); ok {
		t.Errorf("Arg(email) of a literal; want none")
	}
}
