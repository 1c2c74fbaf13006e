package generator

import (
	"bytes"
	"go/format"
	"strings"
	"testing"
)

// Doc comments are written outside gofmt, so they must be in the form gofmt leaves as it is,
// whatever words a directive brings: list markers, numbers and headings never start a line.
func TestDocLines_GofmtLeavesThemAsTheyAre(t *testing.T) {
	t.Parallel()
	texts := []string{
		"FOnce calls F under a forever promise (once for ever), guard \"app.F\", keyed by -x, +y, *p, 1. 2) 3, #4, • and 12.5 and then words that go on long enough to wrap the line more than once - - - 1. 2. 3.",
		strings.Repeat("word ", 40) + "- 1. 2) # * + •",
		"Short.",
		strings.Repeat("x", 150) + " a very long word stands alone",
		strings.Repeat("ab ", 31) + "-1 " + strings.Repeat("cd ", 31) + "10. " + strings.Repeat("ef ", 31) + "#x",
	}
	for _, text := range texts {
		lines := docLines(text)
		for i, l := range lines {
			if !strings.HasPrefix(l, "// ") {
				t.Errorf("line %d is not a // line: %q", i, l)
			}
			if len(l) > docWidth && strings.Contains(l[3:], " ") && !marksLine(l[strings.LastIndex(l, " ")+1:]) {
				t.Errorf("line %d is %d bytes: %q", i, len(l), l)
			}
			if i > 0 && marksLine(strings.Fields(l)[1]) {
				t.Errorf("line %d starts with a marker: %q", i, l)
			}
		}
		if got := strings.Join(strings.Fields(strings.ReplaceAll(strings.Join(lines, " "), "//", "")), " "); got != strings.Join(strings.Fields(text), " ") {
			t.Errorf("the words changed:\n%s\n%s", got, text)
		}
		src := []byte("package p\n\n" + strings.Join(lines, "\n") + "\nfunc F() {}\n")
		out, err := format.Source(src)
		if err != nil || !bytes.Equal(out, src) {
			t.Errorf("gofmt changes the comment (%v):\n%s\n%s", err, src, out)
		}
	}
}

func TestSpliceDocs_EachDeclarationGetsItsOwn(t *testing.T) {
	t.Parallel()
	src := []byte("package p\n\nimport \"fmt\"\n\nvar (\n\t_ = fmt.Sprint\n)\n\nconst C = \"func x\"\n\nfunc F() {\n\tvar y int\n\t_ = y\n}\n")
	out, err := spliceDocs(src, [][]string{{"// V."}, {"// C.", "// More."}, {"// F."}})
	if err != nil {
		t.Fatal(err)
	}
	want := "package p\n\nimport \"fmt\"\n\n// V.\nvar (\n\t_ = fmt.Sprint\n)\n\n// C.\n// More.\nconst C = \"func x\"\n\n// F.\nfunc F() {\n\tvar y int\n\t_ = y\n}\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := spliceDocs(src, [][]string{{"// V."}}); err == nil {
		t.Error("more declarations than doc comments: no error")
	}
	if _, err := spliceDocs(src, [][]string{{"// V."}, {"// C."}, {"// F."}, {"// G."}}); err == nil {
		t.Error("more doc comments than declarations: no error")
	}
}

func TestGroupImports_StandardLibraryFirst(t *testing.T) {
	t.Parallel()
	// As stdPackages reports them from a load: myapp/internal/x belongs to a module.
	std := func(path string) bool { return path == "context" || path == "fmt" || path == "time" }
	src := "package p\n\nimport (\n\"context\"\nfmtpkg \"fmt\"\n\"github.com/jackc/pgx/v5\"\nonce \"github.com/oncekit/once/runtime\"\n\"myapp/internal/x\"\n\"time\"\n)\n\nvar _ = 1\n"
	want := "package p\n\nimport (\n\"context\"\nfmtpkg \"fmt\"\n\"time\"\n\n\"github.com/jackc/pgx/v5\"\nonce \"github.com/oncekit/once/runtime\"\n\"myapp/internal/x\"\n)\n\nvar _ = 1\n"
	if got := string(groupImports([]byte(src), std)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, same := range []string{
		"package p\n\nimport \"context\"\n",
		"package p\n\nimport (\n\"context\"\n\"time\"\n)\n",
		"package p\n\nimport (\n\"example.com/a\"\n\"github.com/b\"\n\"myapp/c\"\n)\n",
	} {
		if got := string(groupImports([]byte(same), std)); got != same {
			t.Errorf("changed one group:\n%s", got)
		}
	}
}
