package directive_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/oncekit/once/internal/directive"
)

// stubs stand in for the packages directives refer to: CheckTypes judges types by their
// package path and name, so a few declarations are enough, and the test needs no go command.
var stubs = map[string]string{
	"context": `package context
type Context interface{ Done() <-chan struct{} }`,
	"time": `package time
type Time struct{ wall uint64 }
func Now() Time { return Time{} }
func (t Time) Unix() int64 { return 0 }
func (t Time) MarshalText() ([]byte, error) { return nil, nil }
func (t Time) MarshalJSON() ([]byte, error) { return nil, nil }`,
	"encoding/json": `package json
type RawMessage []byte
func (m RawMessage) MarshalJSON() ([]byte, error) { return m, nil }`,
	"github.com/jackc/pgx/v5": `package pgx
type Tx interface{ Commit() error }`,
	"math/rand/v2": `package rand
func Int64() int64 { return 4 }`,
	"github.com/google/uuid": `package uuid
type UUID [16]byte
func New() UUID { return UUID{} }
func Parse(s string) (UUID, error) { return UUID{}, nil }`,
}

type stubImporter struct {
	fset *token.FileSet
	pkgs map[string]*types.Package
}

func (im *stubImporter) Import(path string) (*types.Package, error) {
	if p, ok := im.pkgs[path]; ok {
		return p, nil
	}
	src, ok := stubs[path]
	if !ok {
		return nil, fmt.Errorf("no stub for %q", path)
	}
	f, err := parser.ParseFile(im.fset, path+".go", src, 0)
	if err != nil {
		return nil, err
	}
	p, err := (&types.Config{Importer: im}).Check(path, im.fset, []*ast.File{f}, nil)
	if err != nil {
		return nil, err
	}
	im.pkgs[path] = p
	return p, nil
}

// checkTypes parses and type-checks src as package app and runs CheckTypes on each of its
// directives: it returns the typed directives by function name and every error, as printed.
func checkTypes(t *testing.T, src string) (map[string]*directive.Typed, []string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "a.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("parsing source: %v", err)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: &stubImporter{fset: fset, pkgs: map[string]*types.Package{}}, Error: func(error) {}}
	pkg, _ := conf.Check("example.com/app", fset, []*ast.File{f}, info) // type errors are part of some cases
	ds, perrs := directive.ParseFile(fset, f)
	if len(perrs) > 0 {
		t.Fatalf("parse errors: %v", perrs)
	}
	typed := map[string]*directive.Typed{}
	var errs []string
	for _, d := range ds {
		td, es := directive.CheckTypes(fset, pkg, info, d)
		if (td == nil) == (len(es) == 0) {
			t.Fatalf("%s: CheckTypes returned %v and %d errors: want exactly one of them", d.FuncName(), td, len(es))
		}
		typed[d.FuncName()] = td
		for _, e := range es {
			errs = append(errs, e.Error())
		}
	}
	return typed, errs
}

const typesHeader = `package app

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

var (
	_ = json.RawMessage(nil)
	_ = rand.Int64
	_ time.Time
	_ uuid.UUID
	_ pgx.Tx
)

type User struct {
	ID    int64
	Org   string
	Score float64
	Seen  time.Time
	Ref   uuid.UUID
	Tags  []string
}

type Name string

// Slug chooses its own key text.
type Slug struct{ s string }

func (s Slug) OnceKey() string { return s.s }

type Service struct{ tenant string }

func tenantOf(s Service) string { return s.tenant }

// passThrough passes recorded results through as they are: a once.Sealer by its methods.
type passThrough struct{}

func (passThrough) Seal(ctx context.Context, b []byte) ([]byte, error) { return b, nil }
func (passThrough) Open(ctx context.Context, b []byte) ([]byte, error) { return b, nil }

var sealer passThrough
`

func TestCheckTypes_WellTypedDirectivesGetTheirTypes(t *testing.T) {
	t.Parallel()
	src := typesHeader + `
//once:forever key=u.ID,u.Org,u.Seen,u.Ref,Name(u.Org),slug,&u.ID scope=s.tenant fingerprint=u,u.Tags,raw
func (s *Service) Charge(ctx context.Context, u User, slug Slug, raw json.RawMessage) (int64, error) { return 0, nil }

//once:statement key=org cap=limit n=int64(len(items))
func Spend(ctx context.Context, org string, limit int, items ...string) error { return nil }

//once:transaction key=org
func Approve(ctx context.Context, tx pgx.Tx, org string) error { return nil }

//once:open table=runs columns=org_id status=status open=queued
func insertRun(ctx context.Context, tx pgx.Tx, org int64) (int64, error) { return 0, nil }
`
	typed, errs := checkTypes(t, src)
	if len(errs) > 0 {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	charge := typed["Service.Charge"]
	if len(charge.Key) != 7 || charge.Scope == nil || len(charge.Fingerprint) != 3 || charge.Tx != -1 {
		t.Fatalf("Charge: %d key parts, scope %v, %d fingerprint parts, tx %d", len(charge.Key), charge.Scope, len(charge.Fingerprint), charge.Tx)
	}
	if got := types.TypeString(charge.Result, nil); got != "int64" {
		t.Errorf("Charge's result: %s", got)
	}
	wantTypes := []string{"int64", "string", "time.Time", "github.com/google/uuid.UUID", "example.com/app.Name", "example.com/app.Slug", "*int64"}
	for i, k := range charge.Key {
		if got := types.TypeString(k.Type, nil); got != wantTypes[i] {
			t.Errorf("key part %d (%s): type %s, want %s", i, k.Text, got, wantTypes[i])
		}
	}
	spend := typed["Spend"]
	if spend.Cap == nil || spend.N == nil || spend.Result != nil {
		t.Errorf("Spend: cap %v, n %v, result %v", spend.Cap, spend.N, spend.Result)
	}
	if typed["Approve"].Tx != 1 || typed["insertRun"].Tx != 1 {
		t.Errorf("the supplied pgx.Tx: Approve %d, insertRun %d, want 1", typed["Approve"].Tx, typed["insertRun"].Tx)
	}
}

// One case per mistake, with its exact position and words: what both oncegen and oncelint
// print.
func TestCheckTypes_EachMistakeAtItsPosition(t *testing.T) {
	t.Parallel()
	line := strings.Count(typesHeader, "\n") + 2 // the directive's line in each case
	cases := []struct {
		name, decl, want string
	}{
		{"undefined name", `//once:forever key=user.ID
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:20: //once:forever on F: key=user.ID: undefined: user (a key may use the function's parameters)`},
		{"float key", `//once:forever key=u.Score
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:20: //once:forever on F: key=u.Score has type float64, which once.Key cannot encode: use a string, integer, bool, [16]byte UUID, time.Time, once.KeyPart or encoding.TextMarshaler`},
		{"slice scope", `//once:forever key=u.ID scope=u.Tags
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:31: //once:forever on F: scope=u.Tags has type []string, which once.Key cannot encode: use a string, integer, bool, [16]byte UUID, time.Time, once.KeyPart or encoding.TextMarshaler`},
		{"clock", `//once:forever key=u.ID,time.Now().Unix()
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:25: //once:forever on F: key=time.Now().Unix() calls time.Now: a retry must produce the same key, so it may not come from the clock or a random source`},
		{"random", `//once:forever key=rand.Int64()
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:20: //once:forever on F: key=rand.Int64() calls math/rand/v2.Int64: a retry must produce the same key, so it may not come from the clock or a random source`},
		{"fresh uuid", `//once:provider key=uuid.New()
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:21: //once:provider on F: key=uuid.New() calls github.com/google/uuid.New: a retry must produce the same key, so it may not come from the clock or a random source`},
		{"context in key", `//once:forever key=ctx
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:20: //once:forever on F: key= uses the context ctx: key on the function's own arguments`},
		{"named result in key", `//once:forever key=u.ID,n
func F(ctx context.Context, u User) (n int64, err error) { return 0, nil }`,
			`a.go:%[1]d:25: //once:forever on F: key= uses the result n, which exists only once the function has run: key on the function's own arguments`},
		{"supplied tx in key", `//once:transaction key=tx
func F(ctx context.Context, tx pgx.Tx) error { return nil }`,
			`a.go:%[1]d:24: //once:transaction on F: key= uses tx, which the guard supplies: key on the function's own arguments`},
		{"function literal", `//once:forever "key=func() int64 { return u.ID }()"
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:21: //once:forever on F: key=func() int64 { return u.ID }(): a function literal has no place in key=: use the parameters, their fields and methods, and the package's functions`},
		{"string cap", `//once:statement key=u.ID cap=u.Org
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:31: //once:statement on F: cap=u.Org has type string: it must be an integer`},
		{"func fingerprint", `//once:forever key=u.ID fingerprint=u.ID,done
func F(ctx context.Context, u User, done func()) error { return nil }`,
			`a.go:%[1]d:42: //once:forever on F: fingerprint=done has type func(), which encoding/json cannot encode: a function has no JSON form; fingerprint the fields that make up the input`},
		{"map of channels", `//once:forever key=u.ID fingerprint=m
func F(ctx context.Context, u User, m map[string][]chan int) error { return nil }`,
			`a.go:%[1]d:37: //once:forever on F: fingerprint=m has type map[string][]chan int, which encoding/json cannot encode: its values: its elements: a channel has no JSON form; fingerprint the fields that make up the input`},
		{"struct map key", `//once:forever key=u.ID fingerprint=m
func F(ctx context.Context, u User, m map[User]int) error { return nil }`,
			`a.go:%[1]d:37: //once:forever on F: fingerprint=m has type map[User]int, which encoding/json cannot encode: a map key of type User is not a string, an integer or an encoding.TextMarshaler; fingerprint the fields that make up the input`},
		{"complex field", `//once:forever key=u.ID fingerprint=p
func F(ctx context.Context, u User, p *struct{ Z complex64 }) error { return nil }`,
			`a.go:%[1]d:37: //once:forever on F: fingerprint=p has type *struct{Z complex64}, which encoding/json cannot encode: what it points to: field Z: a complex number has no JSON form; fingerprint the fields that make up the input`},
		{"no context", `//once:forever key=u.ID
func F(u User) error { return nil }`,
			`a.go:%[2]d:6: //once:forever on F: its first parameter must be a context.Context, which the guard passes on`},
		{"results", `//once:forever key=u.ID
func F(ctx context.Context, u User) (int, string) { return 0, "" }`,
			`a.go:%[2]d:6: //once:forever on F: it must return error or (T, error), so the guard can tell a failure from a result`},
		{"no tx", `//once:forever table=charges columns=order_id
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[2]d:6: //once:forever on F: it must take a pgx.Tx: the guard runs its INSERT in a transaction and commits it only when a row came back`},
		{"two tx", `//once:transaction key=u.ID
func F(ctx context.Context, a, b pgx.Tx, u User) error { return nil }`,
			`a.go:%[2]d:6: //once:transaction on F: two pgx.Tx parameters; the guard supplies one`},
		{"generic", `//once:forever key=u.ID
func F[T any](ctx context.Context, u User) error { return nil }`,
			`a.go:%[2]d:6: //once:forever on F: a generic function cannot be guarded: guard a non-generic function that calls it`},
		{"undefined parameter type", `//once:forever key=u.ID
func F(ctx context.Context, u Usr) error { return nil }`,
			`a.go:%[2]d:31: //once:forever on F: the type of u (Usr) does not type-check: fix it first`},
		{"seal not a sealer", `//once:forever key=u.ID seal=tenantOf
func F(ctx context.Context, u User) (int64, error) { return 0, nil }`,
			`a.go:%[1]d:30: //once:forever on F: seal=tenantOf has type func(s Service) string, which is not a once.Sealer: it needs the methods Seal and Open, each func(context.Context, []byte) ([]byte, error)`},
		{"seal with a digest", `//once:forever key=u.ID result=digest seal=sealer
func F(ctx context.Context, u User) (int64, error) { return 0, nil }`,
			`a.go:%[1]d:39: //once:forever on F: seal= seals the recorded value, and result=digest records none: leave one out`},
		{"seal hidden by a parameter", `//once:forever key=u.ID seal=sealer
func F(ctx context.Context, u User, sealer int) (int64, error) { return 0, nil }`,
			`a.go:%[1]d:30: //once:forever on F: seal=sealer uses a package-level name that the parameter sealer hides in the wrapper: rename one`},
		{"seal without a value", `//once:forever key=u.ID seal=sealer
func F(ctx context.Context, u User) error { return nil }`,
			`a.go:%[1]d:25: //once:forever on F: seal= says how its result is recorded, and it returns only an error: leave seal= out`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errs := checkTypes(t, typesHeader+"\n"+c.decl+"\n")
			want := fmt.Sprintf(c.want, line, line+1)
			if len(errs) != 1 || errs[0] != want {
				t.Errorf("got  %q\nwant %q", errs, want)
			}
		})
	}
}

// encoding/json's own rules decide: what marshals itself, unexported and json:"-" fields,
// interfaces (only the value can tell) and recursive types pass.
func TestCheckTypes_FingerprintsJSONEncodes(t *testing.T) {
	t.Parallel()
	src := typesHeader + `
type Node struct {
	Name     string
	Children []*Node
	Parent   *Node
}

type Input struct {
	At      time.Time
	Body    json.RawMessage
	Any     any
	ByID    map[int64]string
	ByName  map[Name][]User
	ByTime  map[time.Time]bool
	Tree    Node
	Bytes   []byte
	private chan int
	Skip    func() ` + "`json:\"-\"`" + `
	Named   func() ` + "`json:\"-,\"`" + `
	User
}

//once:forever key=u.ID fingerprint=in,in.At,&in.Tree
func F(ctx context.Context, u User, in Input) error { return nil }
`
	_, errs := checkTypes(t, src)
	if len(errs) != 1 || !strings.Contains(errs[0], "field Named: a function has no JSON form") {
		t.Fatalf("want only the field json:\"-,\" keeps (named \"-\"), got:\n%s", strings.Join(errs, "\n"))
	}
}

// A key part once.MustKey encodes with no chance of an error lets the wrapper call once.MustKey;
// one that may fail (a nil pointer, a MarshalText error, an interface holding nil) keeps
// once.Key and its error.
func TestEncodableWithoutError_OnlyWhereEncodeKeyCannotFail(t *testing.T) {
	t.Parallel()
	src := typesHeader + `
// Email may fail to marshal.
type Email string

func (e Email) MarshalText() ([]byte, error) { return []byte(e), nil }

type Part interface{ OnceKey() string }

//once:forever key=u.ID,u.Org,u.Seen,u.Ref,Name(u.Org),slug,true,uint8(1),&u.ID,email,part,ptrSlug
func F(ctx context.Context, u User, slug Slug, email Email, part Part, ptrSlug *Slug) error { return nil }
`
	typed, errs := checkTypes(t, src)
	if len(errs) > 0 {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	want := []bool{true, true, true, true, true, true, true, true, false, false, false, false}
	for i, k := range typed["F"].Key {
		if got := directive.EncodableWithoutError(k.Type); got != want[i] {
			t.Errorf("key part %s (%s): EncodableWithoutError %v, want %v", k.Text, k.Type, got, want[i])
		}
	}
}
