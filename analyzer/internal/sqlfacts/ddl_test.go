package sqlfacts

import (
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// names renders constraints as "table(a,b)", with "pk " before a primary key.
func names(us []Unique) []string {
	var out []string
	for _, u := range us {
		s := u.Table + "(" + strings.Join(u.Columns, ",") + ")"
		if u.Primary {
			s = "pk " + s
		}
		out = append(out, s)
	}
	return out
}

func TestParseDDL_FindsEveryFormOfUniqueness(t *testing.T) {
	t.Parallel()
	sql := `
-- CREATE UNIQUE INDEX commented ON nothing (x);
CREATE TABLE IF NOT EXISTS "users" (
	id bigserial PRIMARY KEY,
	email text NOT NULL UNIQUE,
	note text DEFAULT 'unique (fake)',
	org_id bigint REFERENCES orgs (id),
	CONSTRAINT users_org_name UNIQUE NULLS NOT DISTINCT (org_id, name),
	KEY idx_org (org_id),
	UNIQUE KEY uq_handle (handle)
);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS jobs_open ON public.jobs USING btree (lower(dedupe_key)) WHERE status IN ('queued');
ALTER TABLE ONLY grants ADD CONSTRAINT grants_pkey PRIMARY KEY (user_id, kind);
ALTER TABLE handles ADD COLUMN name text UNIQUE, ADD COLUMN bio text;
CREATE INDEX plain ON users (org_id);`
	got := names(ParseDDL(sql))
	want := []string{"jobs(dedupe_key)", "pk users(id)", "users(email)", "users(org_id,name)", "users(handle)", "pk grants(user_id,kind)", "handles(name)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseDDL:\n got %q\nwant %q", got, want)
	}
}

func TestParseGo_ReadsLiteralsJoinedAndEntSchemas(t *testing.T) {
	t.Parallel()
	src := "package m\n\nimport (\n\t\"entgo.io/ent\"\n\tf \"entgo.io/ent/schema/field\"\n\t\"entgo.io/ent/schema/index\"\n)\n\n" +
		"var up = \"CREATE UNIQUE INDEX a ON \" +\n\t\"tags (name)\"\n\n" +
		"var skip = \"create unique index b on \" + table + \" (x)\"\n\n" +
		"type Pet struct{ ent.Schema }\n\n" +
		"func (Pet) Fields() []ent.Field { return []ent.Field{f.String(\"tag\").StorageKey(\"tag_no\").Unique(), f.String(\"name\")} }\n\n" +
		"func (Pet) Indexes() []ent.Index { return []ent.Index{index.Fields(\"owner_id\", \"name\").Unique(), index.Fields(\"name\")} }\n"
	got := names(ParseGo([]byte(src)))
	want := []string{"tags(name)", "pets(tag_no)", "pets(owner_id,name)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseGo:\n got %q\nwant %q", got, want)
	}
}

func TestTagUniques_ReadsEachORMsTags(t *testing.T) {
	t.Parallel()
	field := func(name, tag string) (*types.Var, string) {
		return types.NewField(0, nil, name, types.Typ[types.String], false), tag
	}
	var vars []*types.Var
	var tags []string
	for _, f := range []struct{ name, tag string }{
		{"ID", `gorm:"primaryKey"`},
		{"Email", `gorm:"uniqueIndex"`},
		{"TeamID", `gorm:"uniqueIndex:idx_team_user"`},
		{"UserID", `gorm:"uniqueIndex:idx_team_user;column:member_id"`},
		{"Code", `bun:"code,unique"`},
		{"Slug", `xorm:"varchar(20) unique 'url_slug'"`},
		{"A", `xorm:"unique(pair)"`},
		{"B", `xorm:"unique(pair)"`},
	} {
		v, tag := field(f.name, f.tag)
		vars, tags = append(vars, v), append(tags, tag)
	}
	got := names(TagUniques("t", types.NewStruct(vars, tags)))
	want := []string{"pk t(id)", "t(email)", "t(team_id,member_id)", "t(code)", "t(url_slug)", "t(a,b)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TagUniques:\n got %q\nwant %q", got, want)
	}
	// An ID field with no tag naming another key is the primary key by convention.
	v, tag := field("ID", "")
	w, wtag := field("Name", `xorm:"varchar(10)"`)
	if got := names(TagUniques("u", types.NewStruct([]*types.Var{v, w}, []string{tag, wtag}))); !reflect.DeepEqual(got, []string{"pk u(id)"}) {
		t.Errorf("TagUniques of a tagged model with an ID field = %q, want its primary key", got)
	}
}

func TestCovers_NeedsEveryColumnOfTheConstraintLookedUp(t *testing.T) {
	t.Parallel()
	us := []Unique{{Table: "public.invites", Columns: []string{"team_id", "email"}}, {Table: "runs", Columns: []string{"id"}, Primary: true}}
	for _, tc := range []struct {
		table string
		cols  []string
		want  bool
	}{
		{"invites", []string{"team_id", "email", "status"}, true},
		{"invites", []string{"email"}, false},
		{"invites", nil, true},
		{"runs", nil, false}, // a generated key says nothing of what code looks up
		{"runs", []string{"id"}, true},
		{"jobs", []string{"id"}, false},
	} {
		if _, got := Covers(us, tc.table, tc.cols); got != tc.want {
			t.Errorf("Covers(%s, %q) = %v, want %v", tc.table, tc.cols, got, tc.want)
		}
	}
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestForDir_ReadsTheModulesSchema(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, root, map[string]string{
		"go.mod":                            "module m\n",
		"migrations/0001_init.up.sql":       "CREATE TABLE a (id int PRIMARY KEY, email text UNIQUE);",
		"migrations/0002_once.up.sql":       "-- Generated by oncegen for review\nCREATE UNIQUE INDEX g ON a (name);",
		"internal/db/migrate.go":            "package db\nconst up = `CREATE UNIQUE INDEX b_k ON b (k)`\n",
		"internal/store/store.go":           "package store\n",
		"internal/store/store_test.go":      "package store\nconst q = `CREATE UNIQUE INDEX t ON a (test)`\n",
		"vendor/x/schema.sql":               "CREATE UNIQUE INDEX v ON a (vendored);",
		"nested/go.mod":                     "module n\n",
		"nested/migrations/0001.sql":        "CREATE UNIQUE INDEX n ON a (nested);",
		"testdata/migrations/0001_more.sql": "CREATE UNIQUE INDEX td ON a (td);",
		".hidden/x.sql":                     "CREATE UNIQUE INDEX h ON a (hidden);",
		"deploy/constraints.ddl":            "ALTER TABLE a ADD CONSTRAINT a_name UNIQUE (name);",
	})
	us, err := ForDir(filepath.Join(root, "internal", "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(us), []string{"b(k)", "pk a(id)", "a(email)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the store's schema = %q, want %q (oncegen's, vendor's, a nested module's, tests', testdata's and hidden files left out)", got, want)
	}
	named, err := ForDir(filepath.Join(root, "internal", "store"), []string{"deploy/constraints.ddl"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(named); len(got) != 4 || got[3] != "a(name)" {
		t.Errorf("with -schema deploy/constraints.ddl = %q, want a(name) added", got)
	}
	if _, err := ForDir(filepath.Join(root, "internal", "store"), []string{"deploy/missing.sql"}); err == nil || !strings.Contains(err.Error(), "deploy/missing.sql") {
		t.Errorf("a -schema file that does not exist: err = %v, want one naming it", err)
	}
}
