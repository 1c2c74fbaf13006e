package sqltext_test

import (
	"testing"

	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// A model's table is named as the ORMs name it: snake case keeping initialisms whole,
// plural by the common English rules for gorm, bun and ent, singular for xorm.
func TestTableOf_NamesTablesAsTheORMsDo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ    string
		plural bool
		want   string
	}{
		{"User", true, "users"},
		{"APIKey", true, "api_keys"},
		{"OrgID", false, "org_id"},
		{"LabelTask", true, "label_tasks"},
		{"Category", true, "categories"},
		{"Address", true, "addresses"},
		{"Box", true, "boxes"},
		{"Person", true, "people"},
		{"Day", true, "days"},
		{"HTTPRequest", true, "http_requests"},
		{"Subscriber", false, "subscriber"},
	} {
		if got := sqltext.TableOf(tc.typ, tc.plural); got != tc.want {
			t.Errorf("TableOf(%q, %v) = %q, want %q", tc.typ, tc.plural, got, tc.want)
		}
	}
}

// Struct tags are read as reflect reads them, so a tag with several keys and quoted
// values gives each key its own value.
func TestTag(t *testing.T) {
	t.Parallel()
	tag := `json:"email" gorm:"column:email_addr;uniqueIndex:idx_email" bun:"table:users,alias:u"`
	for key, want := range map[string]string{"json": "email", "gorm": "column:email_addr;uniqueIndex:idx_email", "bun": "table:users,alias:u", "xorm": ""} {
		if got := sqltext.Tag(tag, key); got != want {
			t.Errorf("Tag(%q) = %q, want %q", key, got, want)
		}
	}
}
