package schema_test

import (
	"fmt"
	"testing"

	"github.com/oncekit/once/analyzer/internal/schema"
)

func describe(us []schema.Unique) []string {
	var out []string
	for _, u := range us {
		s := fmt.Sprintf("%s%v", u.Table, u.Columns)
		if u.Primary {
			s += " pk"
		}
		out = append(out, s)
	}
	return out
}

// Each way SQL declares uniqueness is read, with the columns it covers; comments and
// string literals are not.
func TestParseSQL_FindsUniqueConstraints(t *testing.T) {
	t.Parallel()
	src := `-- +goose Up
CREATE TABLE IF NOT EXISTS "users" (
	id bigserial PRIMARY KEY,
	email text NOT NULL UNIQUE,
	org_id bigint NOT NULL REFERENCES orgs (id),
	name text DEFAULT 'unique',
	CONSTRAINT users_org_name UNIQUE (org_id, name),
	CHECK (length(email) > 3)
);
-- CREATE UNIQUE INDEX nope ON users (name);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS invites_email ON public.invites USING btree (lower(email), team_id) WHERE accepted_at IS NULL;
ALTER TABLE ONLY coupons ADD CONSTRAINT coupons_code_key UNIQUE (code);
alter table wallets add primary key (user_id);
CREATE TABLE t2 (a int, b int, UNIQUE KEY t2_ab (a, b));
ALTER TABLE accounts
    ADD COLUMN sealed_email BYTEA,
    ADD COLUMN IF NOT EXISTS email_digest TEXT UNIQUE,
    ADD handle text CONSTRAINT accounts_handle_key UNIQUE,
    ADD COLUMN note text DEFAULT 'unique';
ALTER TABLE accounts ADD COLUMN region text;
`
	got := describe(schema.ParseSQL("m.sql", src))
	want := []string{"public.invites[email team_id]", "coupons[code]", "wallets[user_id] pk", "accounts[email_digest]", "accounts[handle]", "users[id] pk", "users[email]", "users[org_id name]", "t2[a b]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// ent's schema types name their unique fields and indexes in Go.
func TestParseGo_EntSchemaAndGoMigrations(t *testing.T) {
	t.Parallel()
	src := `package schema

func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("email").NotEmpty().Unique(),
		field.String("handle").StorageKey("user_handle").Unique(),
		field.String("name"),
	}
}

func (APIKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("org_id", "label").Unique(), index.Fields("created_at")}
}

func up(tx *sql.Tx) error {
	_, err := tx.Exec(` + "`CREATE UNIQUE INDEX x ON memberships (org_id, user_id)`" + `)
	return err
}
`
	got := describe(schema.ParseGo("schema/user.go", []byte(src)))
	want := []string{"memberships[org_id user_id]", "users[email]", "users[user_handle]", "api_keys[org_id label]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// A read whose columns include a constraint's is covered; one by other columns is not;
// a read whose columns are unknown is covered by a unique constraint but not by a
// primary key alone.
func TestCovers(t *testing.T) {
	t.Parallel()
	s := &schema.Schema{Uniques: []schema.Unique{
		{Table: "users", Columns: []string{"id"}, Primary: true},
		{Table: "members", Columns: []string{"org_id", "user_id"}},
		{Table: "public.coupons", Columns: []string{"code"}},
	}}
	for _, tc := range []struct {
		table string
		keys  []string
		want  bool
	}{
		{"members", []string{"org_id", "user_id", "role"}, true},
		{"members", []string{"org_id"}, false},
		{"members", nil, true},
		{"users", nil, false},
		{"users", []string{"id"}, true},
		{"coupons", []string{"code"}, true},
		{"orders", nil, false},
	} {
		if _, got := s.Covers(tc.table, tc.keys); got != tc.want {
			t.Errorf("Covers(%s, %v) = %v, want %v", tc.table, tc.keys, got, tc.want)
		}
	}
}
