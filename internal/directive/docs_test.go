package directive

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocs_DirectivesPageMatchesTheTable holds docs/directives.md to the per-kind table: every
// kind has its row in the kinds' table, every argument of its key= form is named in that row
// (or among the arguments every kind takes), and every kind with a table= form has its row in
// the table= forms' table naming each of that form's arguments.
func TestDocs_DirectivesPageMatchesTheTable(t *testing.T) {
	page, err := os.ReadFile("../../docs/directives.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // "`kind`" -> each table row starting with it
	for _, line := range strings.Split(string(page), "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 2 {
			rows[strings.TrimSpace(cells[1])] = append(rows[strings.TrimSpace(cells[1])], line)
		}
	}
	named := func(row, arg string) bool {
		return regexp.MustCompile("(^|[ `\\[])" + arg + "=").MatchString(row)
	}
	for _, k := range Kinds {
		s := SpecOf(k)
		kr := rows["`"+string(k)+"`"]
		if len(kr) == 0 {
			t.Errorf("docs/directives.md: no row for kind %s", k)
			continue
		}
		for arg := range s.key.args {
			if arg == "name" || arg == "key" {
				continue
			}
			if !named(kr[0], arg) {
				t.Errorf("docs/directives.md: the row of %s does not name its argument %s=", k, arg)
			}
		}
		if s.Table == nil {
			if len(kr) > 1 {
				t.Errorf("docs/directives.md: %s has a table= row but no table= form", k)
			}
			continue
		}
		if len(kr) < 2 {
			t.Errorf("docs/directives.md: no table= row for kind %s", k)
			continue
		}
		for arg := range s.tableArgs() {
			if arg != "name" && !named(kr[1], arg) {
				t.Errorf("docs/directives.md: the table= row of %s does not name its argument %s=", k, arg)
			}
		}
	}
}
