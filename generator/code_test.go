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

// typesSrc declares a variable of each type whose rendering has a trap: a struct's tags are
// part of its type (keys out of order, a tag that is no key:"value" list, a newline or a
// backquote in it), and "chan <-chan int" would read as a send-only channel.
const typesSrc = "package p\n\nimport \"context\"\n\nvar (\n" +
	"\tTags struct {\n\t\tA int64 `json:\"id\" db:\"id\"`\n\t\tB int64 `not a conventional tag`\n\t\tC int64 \"line\\nbreak\"\n\t\tD int64 \"back`quote\"\n\t}\n" +
	"\tChanOfRecv chan (<-chan int)\n" +
	"\tSendOfChan chan<- chan int\n" +
	"\tRecvOfRecv <-chan <-chan int\n" +
	"\tFunc func(context.Context, ...string) (map[string][]*int, error)\n" +
	"\tIface interface {\n\t\tcontext.Context\n\t\tM(int) bool\n\t}\n" +
	")\n"

// typeCode renders each type so that the code it writes has the very same type.
func TestTypeCode_RendersTheSameType(t *testing.T) {
	t.Parallel()
	imp := importer.Default() // one importer, so both files share context.Context
	want := typeCheck(t, imp, []byte(typesSrc))
	f := jen.NewFile("p")
	names := want.Scope().Names()
	for _, name := range names {
		f.Var().Id(name).Add(typeCode(want.Scope().Lookup(name).Type()))
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		t.Fatal(err)
	}
	got := typeCheck(t, imp, buf.Bytes())
	for _, name := range names {
		w, g := want.Scope().Lookup(name).Type(), got.Scope().Lookup(name).Type()
		if !types.Identical(w, g) {
			t.Errorf("%s: rendered %s, want %s", name, g, w)
		}
	}
}

func typeCheck(t *testing.T, imp types.Importer, src []byte) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	pkg, err := (&types.Config{Importer: imp}).Check("p", fset, []*ast.File{file}, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return pkg
}
