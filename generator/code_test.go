package generator

import (
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"github.com/dave/jennifer/jen"
)

// A struct's tags are part of its type: typeCode writes each one as the same string (keys
// out of order, a tag that is no key:"value" list, a newline or a backquote in it), so the
// rendered type is identical to the one it came from.
func TestTypeCode_StructTagsKeepTheTypeIdentical(t *testing.T) {
	t.Parallel()
	tags := []string{`json:"id" db:"id"`, `not a conventional tag`, "line\nbreak", "back`quote", `xml:"note,attr"`}
	fields := make([]*types.Var, len(tags))
	for i := range tags {
		fields[i] = types.NewField(token.NoPos, nil, string(rune('A'+i)), types.Typ[types.Int64], false)
	}
	want := types.NewStruct(fields, tags)

	f := jen.NewFile("p")
	f.Var().Id("V").Add(typeCode(want))
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", buf.Bytes(), 0)
	if err != nil {
		t.Fatalf("rendered code does not parse: %v\n%s", err, buf.Bytes())
	}
	pkg, err := (&types.Config{Importer: importer.Default()}).Check("p", fset, []*ast.File{file}, nil)
	if err != nil {
		t.Fatalf("rendered code does not type-check: %v\n%s", err, buf.Bytes())
	}
	if got := pkg.Scope().Lookup("V").Type(); !types.Identical(got, want) {
		t.Errorf("rendered type %s, want %s:\n%s", got, want, buf.Bytes())
	}
}
