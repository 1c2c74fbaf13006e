package generator_test

import (
	"strings"
	"testing"

	"github.com/oncekit/once/generator"
	"github.com/oncekit/once/internal/directive"
)

// Two guards declaring the same counter the same way share its column and checks; with two
// caps they conflict on the cap check, the one object they declare differently.
func TestObjects_SameDeclarationShares(t *testing.T) {
	t.Parallel()
	var stmt *generator.Guard
	for _, g := range load(t, generator.LoadConfig{Dir: root(t), Patterns: []string{"./testdata/generate/tables"}}).Guards {
		if g.Kind == directive.Statement && g.HasTable() {
			stmt = g
			break
		}
	}
	if stmt == nil {
		t.Fatal("no statement guard on a table in testdata/generate/tables")
	}
	twin := func(cap int64) *generator.Guard {
		d := *stmt.Directive
		d.Name += "Twin"
		d.Cap.Lit = cap
		g := *stmt
		g.Directive = &d
		return &g
	}
	objs, err := generator.Objects([]*generator.Guard{stmt, twin(stmt.Cap.Lit)})
	if err != nil {
		t.Fatalf("the same declaration twice: %v", err)
	}
	for _, o := range objs {
		if o.Kind == generator.ObjColumn && o.Name == stmt.Counter && len(o.Guards) != 2 {
			t.Errorf("column %s relied on by %v, want both guards", o.Name, o.Guards)
		}
	}
	_, err = generator.Objects([]*generator.Guard{stmt, twin(stmt.Cap.Lit + 1)})
	if err == nil || !strings.Contains(err.Error(), "check "+stmt.CapName()+" is declared twice") {
		t.Fatalf("two caps on one counter: %v, want the cap check named", err)
	}
}
