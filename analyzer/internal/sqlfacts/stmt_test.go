package sqlfacts

import (
	"reflect"
	"testing"
)

func TestParse_ReadsWhatCheckThenInsertIsMadeOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sql  string
		want Stmt
	}{
		{`SELECT id FROM invites WHERE team_id = $1 AND email = $2`,
			Stmt{Kind: Read, Tables: []string{"invites"}, Keys: []string{"team_id", "email"}, Selected: []string{"id"}}},
		{`select exists (select 1 from follows where user_id = $1)`,
			Stmt{Kind: Read, Tables: []string{"follows"}, Keys: []string{"user_id"}, Exists: true, OneRow: true}},
		{`SELECT count(*) FROM s.stars WHERE user_id = ? -- the user's`,
			Stmt{Kind: Read, Tables: []string{"stars"}, Keys: []string{"user_id"}, Selected: []string{""}, Count: true, OneRow: true}},
		{`SELECT coalesce(sum(amount), 0) FROM charges WHERE account_id = $1`,
			Stmt{Kind: Read, Tables: []string{"charges"}, Keys: []string{"account_id"}, Selected: []string{""}, Sum: true, OneRow: true}},
		{`SELECT j.id, j.state AS s, lower(name) FROM jobs j WHERE j.id = $1`,
			Stmt{Kind: Read, Tables: []string{"jobs"}, Keys: []string{"id"}, Selected: []string{"id", "s", ""}}},
		{`SELECT id FROM courses WHERE id = $1 FOR NO KEY UPDATE`,
			Stmt{Kind: Read, Tables: []string{"courses"}, Keys: []string{"id"}, Selected: []string{"id"}, RowLock: true}},
		{`SELECT * FROM jobs WHERE state = 'where x = 1' ORDER BY id LIMIT 1`,
			Stmt{Kind: Read, Tables: []string{"jobs"}, Keys: []string{"state"}, Selected: []string{""}}},
		{`INSERT INTO invites (team_id, email) VALUES ($2, $1)`,
			Stmt{Kind: Insert, Tables: []string{"invites"}, Columns: []string{"team_id", "email"}, Args: []int{1, 0}}},
		{`INSERT INTO t (a, b, c) VALUES (?, now(), ?) RETURNING id`,
			Stmt{Kind: Insert, Tables: []string{"t"}, Columns: []string{"a", "b", "c"}, Args: []int{0, -1, 1}}},
		{`INSERT INTO invites (team_id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			Stmt{Kind: Insert, Tables: []string{"invites"}, Columns: []string{"team_id", "email"}, Args: []int{0, 1}, Conflict: DoNothing}},
		{`INSERT IGNORE INTO tags (name) VALUES (?)`,
			Stmt{Kind: Insert, Tables: []string{"tags"}, Columns: []string{"name"}, Args: []int{0}, Conflict: DoNothing}},
		{`INSERT INTO spend (k, used) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET used = spend.used + excluded.used`,
			Stmt{Kind: Insert, Tables: []string{"spend"}, Columns: []string{"k", "used"}, Args: []int{0, 1}, Conflict: Accumulate}},
		{`INSERT INTO spend (k, used) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET used = spend.used + excluded.used WHERE spend.used + excluded.used <= $3`,
			Stmt{Kind: Insert, Tables: []string{"spend"}, Columns: []string{"k", "used"}, Args: []int{0, 1}, Conflict: DoNothing}},
		{`INSERT INTO plans (k, plan) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET plan = excluded.plan`,
			Stmt{Kind: Insert, Tables: []string{"plans"}, Columns: []string{"k", "plan"}, Args: []int{0, 1}, Conflict: DoNothing}},
		{`UPDATE jobs SET state = 'running' WHERE id = $1`,
			Stmt{Kind: Update, Tables: []string{"jobs"}, Columns: []string{"state"}, Keys: []string{"id"}, SetsConst: true}},
		{`UPDATE jobs j SET state = 'running', started_at = now() WHERE j.id = $1 AND j.state = 'pending' RETURNING id`,
			Stmt{Kind: Update, Tables: []string{"jobs"}, Columns: []string{"state", "started_at"}, Keys: []string{"id", "state"}, SetsConst: true, OldState: true}},
		{`UPDATE jobs SET state = $2 WHERE id = $1 AND state = ANY($3)`,
			Stmt{Kind: Update, Tables: []string{"jobs"}, Columns: []string{"state"}, Keys: []string{"id", "state"}}},
		{`UPDATE leases SET holder = $1, until = $2 WHERE key = $3 AND until < now()`,
			Stmt{Kind: Update, Tables: []string{"leases"}, Columns: []string{"holder", "until"}, Keys: []string{"key", "until"}, OldState: true}},
		{`DELETE FROM tokens WHERE token = $1`, Stmt{Kind: Delete, Tables: []string{"tokens"}, Keys: []string{"token"}}},
		{`SELECT pg_advisory_xact_lock($1)`, Stmt{Kind: Lock}},
		{`SELECT pg_try_advisory_lock(hashtext($1))`, Stmt{Kind: Lock}},
		{`SET TRANSACTION ISOLATION LEVEL SERIALIZABLE`, Stmt{Kind: Lock}},
		{`LOCK TABLE runs IN EXCLUSIVE MODE`, Stmt{Kind: Lock}},
		{`CREATE INDEX x ON t (a)`, Stmt{}},
	} {
		if got := Parse(tc.sql); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q)\n got %+v\nwant %+v", tc.sql, got, tc.want)
		}
	}
}

func TestWhereKeys_ReadsAnORMsCondition(t *testing.T) {
	t.Parallel()
	got := WhereKeys("email = ? AND org_id IN (?) AND deleted_at IS NULL AND name LIKE 'a = b'")
	if want := []string{"email", "org_id", "deleted_at", "name"}; !reflect.DeepEqual(got, want) {
		t.Errorf("WhereKeys = %q, want %q", got, want)
	}
	// A column compared through a text normalisation is still the column compared.
	got = WhereKeys("user_id=$1 AND lower(title)=lower($2)")
	if want := []string{"user_id", "title"}; !reflect.DeepEqual(got, want) {
		t.Errorf("WhereKeys = %q, want %q", got, want)
	}
}

func TestTableOf_NamesAsTheORMsDo(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{"User": "users", "APIKey": "api_keys", "Company": "companies", "Box": "boxes", "TaskAssignee": "task_assignees"} {
		if got := TableOf(name, true); got != want {
			t.Errorf("TableOf(%q, plural) = %q, want %q", name, got, want)
		}
	}
	if got := TableOf("LabelTask", false); got != "label_task" {
		t.Errorf("TableOf(LabelTask, singular) = %q, want label_task", got)
	}
}
