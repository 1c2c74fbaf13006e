package directive

import (
	"fmt"
	"go/constant"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const (
	directivePath = "github.com/oncekit/once/internal/directive"
	runtimePath   = "github.com/oncekit/once/runtime"
)

// loadTypes loads the types of this package, as declared, and of the runtime.
func loadTypes(t *testing.T) (self, runtime *types.Package) {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, directivePath, runtimePath)
	if err != nil {
		t.Fatalf("loading packages: %v", err)
	}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("loading %s: %v", p.PkgPath, p.Errors)
		}
		switch p.PkgPath {
		case directivePath:
			self = p.Types
		case runtimePath:
			runtime = p.Types
		}
	}
	if self == nil || runtime == nil {
		t.Fatalf("loaded %d packages, not %s and %s", len(pkgs), directivePath, runtimePath)
	}
	return self, runtime
}

// declaredKinds returns every constant of type Kind that pkg declares.
func declaredKinds(pkg *types.Package) []Kind {
	var ks []Kind
	for _, name := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok {
			continue
		}
		if n, ok := c.Type().(*types.Named); ok && n.Obj().Name() == "Kind" && c.Val().Kind() == constant.String {
			ks = append(ks, Kind(constant.StringVal(c.Val())))
		}
	}
	return ks
}

// tableProblems lists what is missing for each declared kind: its row in the table (as
// specOf returns it), the row's columns, and the runtime guard and status the row names in
// package once (runtime).
func tableProblems(declared []Kind, specOf func(Kind) *Spec, runtime *types.Package) []string {
	var out []string
	bad := func(k Kind, format string, args ...any) {
		out = append(out, fmt.Sprintf("kind %s: ", k)+fmt.Sprintf(format, args...))
	}
	guard := func(k Kind, name string, methods ...string) {
		obj, ok := runtime.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			bad(k, "package once has no type %s, the runtime guard the row names", name)
			return
		}
		for _, m := range methods {
			if f, _, _ := types.LookupFieldOrMethod(obj.Type(), true, runtime, m); f == nil {
				bad(k, "once.%s has no %s method", name, m)
			}
		}
	}
	for _, k := range declared {
		s := specOf(k)
		if s == nil {
			bad(k, "no row in the table (spec.go)")
			continue
		}
		if s.Kind != k {
			bad(k, "its row is kind %s's", s.Kind)
		}
		if s.Promise == "" || s.Fields == nil || s.Doc == nil || s.Mechanism == nil {
			bad(k, "its row lacks a promise, fields, a doc or a mechanism")
		}
		methods := []string{"Do"}
		if s.Rearm {
			methods = append(methods, "Rearm")
		}
		guard(k, s.Guard, methods...)
		if s.Replays {
			// A kind that replays a recorded value returns it through a generic function
			// named after its guard.
			if f, ok := runtime.Scope().Lookup(s.Guard + "Value").(*types.Func); !ok || f.Signature().TypeParams().Len() == 0 {
				bad(k, "package once has no generic function %sValue, which returns the value a duplicate replays", s.Guard)
			}
		}
		if s.NotRun != "" {
			if c, ok := runtime.Scope().Lookup(s.NotRun).(*types.Const); !ok || c.Type().String() != runtimePath+".Status" {
				bad(k, "package once has no Status %s, which the row says a call that does not run gets", s.NotRun)
			}
		}
		if t := s.Table; t != nil {
			if t.Conflict == nil || t.Mechanism == nil || t.NotRunWords == "" || s.NotRun == "" {
				bad(k, "its table= form lacks a conflict clause, a mechanism, or what a call that meets the promise gets")
			}
			guard(k, TableGuard, "Do")
		}
	}
	return out
}

// Every kind has its row, and the row names a runtime guard that exists: adding a kind
// without one, or renaming a guard in the runtime only, fails here.
func TestSpec_EveryKindHasARowAndItsRuntimeGuard(t *testing.T) {
	t.Parallel()
	self, runtime := loadTypes(t)
	declared := declaredKinds(self)
	if len(declared) != len(Kinds) {
		t.Errorf("%d Kind constants, %d rows (Kinds: %v)", len(declared), len(Kinds), Kinds)
	}
	for _, p := range tableProblems(declared, SpecOf, runtime) {
		t.Error(p)
	}
}

// The check above fails on a kind without a row, a guard the runtime does not have, a type
// that is no guard, and a replaying kind whose guard has no value function.
func TestSpec_CheckFindsAMissingRowAndAMissingGuard(t *testing.T) {
	t.Parallel()
	self, runtime := loadTypes(t)
	declared := append(declaredKinds(self), "ninth")
	specOf := func(k Kind) *Spec {
		s := SpecOf(k)
		switch k {
		case Forever:
			renamed := *s
			renamed.Guard = "Forevermore"
			return &renamed
		case Open:
			notAGuard := *s
			notAGuard.Guard = "Outcome"
			return &notAGuard
		case Request:
			valueless := *s
			valueless.Guard = "Open"
			return &valueless
		case Episode:
			stale := *s
			stale.NotRun = "Fired"
			return &stale
		}
		return s
	}
	got := strings.Join(tableProblems(declared, specOf, runtime), "\n")
	for _, want := range []string{
		"kind ninth: no row in the table",
		"kind forever: package once has no type Forevermore",
		"kind open: once.Outcome has no Do method",
		"kind episode: package once has no Status Fired",
		"kind request: package once has no generic function OpenValue",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
}
