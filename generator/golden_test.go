package generator_test

import (
	"bytes"
	"flag"
	"go/format"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/oncekit/once/generator"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goodCases are the golden inputs that generate; their once_gen.go files are the expected
// output, and they compile.
var goodCases = []string{"./testdata/generate/kinds", "./testdata/generate/tables", "./testdata/generate/multi/..."}

// root is the module root, where the golden cases live under testdata/.
func root(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func load(t testing.TB, cfg generator.LoadConfig) *generator.Result {
	t.Helper()
	pkgs, err := generator.Load(cfg)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	res, err := generator.Generate(pkgs)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return res
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (run go test ./generator -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what generation produces (run go test ./generator -update and review):\n%s",
			path, generator.UnifiedDiff("want", "got", want, got))
	}
}

func TestGolden_WrappersMatchAndCompile(t *testing.T) {
	t.Parallel()
	dir := root(t)
	res := load(t, generator.LoadConfig{Dir: dir, Patterns: goodCases})
	if len(res.Files) != 4 {
		t.Errorf("generated %d files, want 4 (kinds, tables, accounts, billing)", len(res.Files))
	}
	if len(res.Orphans) != 0 {
		t.Errorf("orphans: %v", res.Orphans)
	}
	for path, src := range res.Files {
		golden(t, path, src)
		if !bytes.HasPrefix(src, []byte(generator.Header+"\n")) {
			t.Errorf("%s does not start with the header", path)
		}
		// Formatted: gofmt changes nothing, doc comments (written outside it) included.
		if formatted, err := format.Source(src); err != nil || !bytes.Equal(formatted, src) {
			t.Errorf("%s is not gofmt'ed (%v):\n%s", path, err, generator.UnifiedDiff("generated", "gofmt", src, formatted))
		}
	}
	// The golden Go compiles, and vet finds nothing in it.
	cmd := exec.Command("go", append([]string{"vet"}, goodCases...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the golden packages: %v\n%s", err, out)
	}
}

// A module whose path has no dot (myapp) is not the standard library: its packages are
// imported after it, with the other modules', as goimports groups them. The case is a module
// of its own (testdata/generate/dotless, its once replaced by this checkout), and its
// generated file compiles there.
func TestGolden_DotlessModulePathIsNotTheStandardLibrary(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(root(t), "testdata/generate/dotless")
	res := load(t, generator.LoadConfig{Dir: dir})
	path := filepath.Join(dir, "app", generator.FileName)
	src, ok := res.Files[path]
	if len(res.Files) != 1 || !ok {
		t.Fatalf("generated %d files, want %s alone", len(res.Files), path)
	}
	golden(t, path, src)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	// Each import's group: a blank line between two imports starts the next one.
	group, line := map[string]int{}, 0
	for i, imp := range f.Imports {
		l := fset.Position(imp.Pos()).Line
		if i > 0 && l > line+1 {
			group[""]++
		}
		line = l
		group[strings.Trim(imp.Path.Value, `"`)] = group[""]
	}
	want := map[string]int{"context": 0, "net/http": 0, "myapp/internal/x": 1, generator.RuntimePath: 1}
	for p, g := range want {
		if got, ok := group[p]; !ok || got != g {
			t.Errorf("import %q in group %d (present: %t), want group %d: standard library first, then every module's", p, got, ok, g)
		}
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the dotless module: %v\n%s", err, out)
	}
}

func TestGolden_Inventory(t *testing.T) {
	t.Parallel()
	dir := root(t)
	res := load(t, generator.LoadConfig{Dir: dir, Patterns: goodCases})
	entries := generator.Inventory(res.Guards, dir)
	golden(t, filepath.Join(dir, "testdata/inventory/inventory.md"), generator.InventoryMarkdown(entries))
	js, err := generator.InventoryJSON(entries)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join(dir, "testdata/inventory/inventory.json"), js)
	// Shortest promise first.
	for i := 1; i < len(entries); i++ {
		if rank(entries[i-1].Kind) > rank(entries[i].Kind) {
			t.Errorf("%s listed before %s", entries[i-1].Kind, entries[i].Kind)
		}
	}
}

func rank(kind string) int {
	for i, k := range []string{"request", "transaction", "lease", "open", "episode", "statement", "provider", "forever"} {
		if k == kind {
			return i
		}
	}
	return -1
}

// Each class of bad input: the exact file:line:col and message, and no file produced.
func TestBadInput_OneCasePerErrorClass(t *testing.T) {
	t.Parallel()
	dir := root(t)
	cases, err := filepath.Glob(filepath.Join(dir, "testdata/generate/bad/*"))
	if err != nil || len(cases) < 17 {
		t.Fatalf("bad cases: %v, %v", cases, err)
	}
	for _, c := range cases {
		name := filepath.Base(c)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pkgs, err := generator.Load(generator.LoadConfig{Dir: dir, Patterns: []string{"./testdata/generate/bad/" + name}})
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			res, err := generator.Generate(pkgs)
			if err == nil {
				t.Fatalf("generated %d files from bad input", len(res.Files))
			}
			if res != nil {
				t.Errorf("a result came back with the error: %+v", res)
			}
			got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "") + "\n"
			golden(t, filepath.Join(c, "want.txt"), []byte(got))
			if _, err := os.Stat(filepath.Join(c, generator.FileName)); !os.IsNotExist(err) {
				t.Errorf("%s exists", generator.FileName)
			}
		})
	}
}

// Two runs, packages and files in shuffled order, and another GOOS and GOFLAGS: the same bytes.
func TestDeterminism_SameBytesWhateverTheOrderAndEnvironment(t *testing.T) {
	t.Parallel()
	dir := root(t)
	first := load(t, generator.LoadConfig{Dir: dir, Patterns: goodCases})

	pkgs, err := generator.Load(generator.LoadConfig{Dir: dir, Patterns: []string{goodCases[2], goodCases[0], goodCases[1]}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(pkgs), func(i, j int) { pkgs[i], pkgs[j] = pkgs[j], pkgs[i] })
	for _, p := range pkgs {
		r.Shuffle(len(p.Syntax), func(i, j int) { p.Syntax[i], p.Syntax[j] = p.Syntax[j], p.Syntax[i] })
	}
	second, err := generator.Generate(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOOS=windows", "GOARCH=arm64", "GOFLAGS=-mod=mod -trimpath")
	third := load(t, generator.LoadConfig{Dir: dir, Patterns: goodCases, Env: env})

	for name, res := range map[string]*generator.Result{"shuffled": second, "GOOS=windows": third} {
		if !sameFiles(first.Files, res.Files) {
			t.Errorf("%s: generated files differ from the first run", name)
		}
		a := generator.InventoryMarkdown(generator.Inventory(first.Guards, dir))
		b := generator.InventoryMarkdown(generator.Inventory(res.Guards, dir))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: inventory differs:\n%s", name, generator.UnifiedDiff("first", name, a, b))
		}
	}
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !bytes.Equal(a[k], b[k]) {
			return false
		}
	}
	return true
}
