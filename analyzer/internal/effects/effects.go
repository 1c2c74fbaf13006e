package effects

import (
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"

	catalog "github.com/oncekit/once/analyzer/internal/effects/oldcatalog"
	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/sqltext"
	"github.com/oncekit/once/internal/directive"
)

// RuntimePath is the import path of once's runtime package.
const RuntimePath = "github.com/oncekit/once/runtime"

// EffectFact marks a function that performs an effect no promise covers: calling it is
// calling the provider.
type EffectFact struct {
	// Via names the provider call at the bottom of the chain: "(*sesv2.Client).SendEmail".
	Via string
	// Effect completes "a retry ... again".
	Effect string
	// Class is the catalogue's class of the effect.
	Class string
	// Chain names the functions of the module between this one and the provider call,
	// nearest first: "(*mailer.Mailer).Send".
	Chain []string
	// Cond marks a function that performs the effect only when its parameter Param (an
	// HTTP method, or a request) is one of Methods: callers passing a POST perform it.
	Cond    bool
	Param   int
	Methods []string
	// URLArg is one more than the index of the parameter the request's URL is taken
	// from, for a conditional function (a transport given the method and the URL); 0
	// when the URL is the function's own. A caller passing a URL the catalogue lists as
	// a read performs no effect.
	URLArg int
	// Reported: the effect is reported at the function's definition (no promise is held
	// above any call of it in the module), so its callers do not report it again.
	Reported bool
}

// AFact marks EffectFact as a fact.
func (*EffectFact) AFact() {}

func (f *EffectFact) String() string { return "effect(" + f.Via + ")" }

// GuardedFact marks a function declared with a //once: directive.
type GuardedFact struct {
	// Kind is the directive's kind.
	Kind string
	// Wrapper is the name of the generated wrapper (FOnce; a method for a method).
	Wrapper string
}

// AFact marks GuardedFact as a fact.
func (*GuardedFact) AFact() {}

func (f *GuardedFact) String() string { return "guarded(" + f.Kind + ")" }

// PackageFact marks a package that exports effect or guard facts, so an importer knows
// it cannot take the fast path.
type PackageFact struct{}

// AFact marks PackageFact as a fact.
func (*PackageFact) AFact() {}

func (*PackageFact) String() string { return "once" }

// Result is what the checks read: the package's functions, effect sites and directives.
type Result struct {
	// Fast is set when the package imports nothing of interest and holds no directive;
	// the other fields are then empty, except Ignores.
	Fast bool
	// Catalog is the catalogue in force.
	Catalog *catalog.Catalog
	// Funcs holds the package's declared functions with bodies, in source order.
	Funcs []*Func
	// ByObj finds a Func by its object.
	ByObj map[*types.Func]*Func
	// Directives are the valid directives; DirectiveErrors the parser's errors.
	Directives      []*directive.Directive
	DirectiveErrors []*directive.Error
	// GuardedCalls are calls of functions declared with a directive, here or elsewhere.
	GuardedCalls []*GuardedCall
	// LocalGuards are process-local sets used as the guard of an effect (ONCE003).
	LocalGuards []*LocalGuard
	// Ignores are the //oncelint:ignore comments of the package.
	Ignores *ignore.Index
	// Tables are the tables //once: ... table= directives of the package declare.
	Tables []string
}

// Func is one declared function or method of the package.
type Func struct {
	Obj  *types.Func
	Decl *ast.FuncDecl
	File *ast.File
	// Test is set for functions of _test.go files; Generated for generated files.
	Test, Generated bool
	// Directive is the function's //once: directive, if any.
	Directive *directive.Directive
	// Sites are the effect calls in the body, keyed or not, guarded or not.
	Sites []*Site
	// Covered: the function holds a promise, or every call of it in the package is made
	// under one.
	Covered bool
	// Effectful: the function performs an effect that no promise or key covers.
	Effectful bool
	// Reports: the function's unguarded effects are reported in it. It is not covered,
	// not in a test file, and no promise is held above any call of it in the module.
	Reports bool
	// Settled: every effect the function reaches is reported further down the calls.
	Settled bool
	// ValueRef: the function is used as a value in the package (a handler, a callback).
	ValueRef bool
	// SQL are the statements the function sends, itself or through the functions it
	// calls, in source order. Serializable: it asks for a serializable transaction.
	SQL          []SQLOp
	Serializable bool

	callers []*edge // in-package calls of this function (outside test files)
	calls   []*edge // in-package calls this function makes
	// handedCallers are calls of this function from closures handed out (a route's
	// handler): they make it an entry point rather than a callee, but still say what
	// its arguments are, which ONCE003 reads for a set passed in.
	handedCallers []*edge
	via           *Site // the first unguarded site, naming the effect at the bottom

	sqlSummary []sqltext.Stmt // what callers see of its SQL (SQLFact)
	latched    []latchRegion  // the parts of the body that run once a latch was taken

	cond      []*Site // effects that depend on a parameter (an HTTP method or request)
	activated bool    // a caller passes a state-changing method: cond is made plain
	// activators are the functions whose calls activated it. A transport (a helper
	// sending the request its callers describe) with one activator is that caller's
	// decision, and is judged there.
	activators []*Func
	transport  bool
	promised   bool // a promise is held above some call of it (see propagate)
	// shared: the function is called from two or more packages of the module (the
	// module's own mail or SMS service): each caller decides what it sends, so the
	// callers are judged, each at its call.
	shared bool
	// deferred: the function's effect is judged at its callers (see propagate).
	deferred bool
	// absorbed: deferred to its one caller, which decides an effect of its own.
	absorbed bool
}

// Via returns the first unguarded effect site of the function: the next step of the
// chain of calls from it to the provider call.
func (f *Func) Via() *Site { return f.via }

// Call is a call of one of the package's functions made by another.
type Call struct {
	Call *ast.CallExpr
	From *Func
}

// Callers returns the calls of the function made in the package, outside test files
// (those in closures handed out, such as a route's handler, among them).
func (f *Func) Callers() []Call {
	var out []Call
	for _, e := range append(f.callers[:len(f.callers):len(f.callers)], f.handedCallers...) {
		out = append(out, Call{Call: e.call, From: e.from})
	}
	return out
}

// edge is one static call between two functions of the package.
type edge struct {
	call   *ast.CallExpr
	from   *Func
	to     *Func
	guard  *Guard // the runtime guard whose closure holds the call, if any
	active bool   // the callee performs an unguarded effect
	// inert: the callee's effect depends on an argument this call does not give it (a
	// GET); fromCond: it depends on the caller's own parameter.
	inert, fromCond bool
	// purpose: inert because the caller is named for a purpose with no lasting effect,
	// which the callee's raw requests serve (see inertPurposeCalls).
	purpose bool
}

// Guard is a call of a runtime guard whose closure argument runs under its promise, or
// (Kind LatchGuard) a branch on a hand-written latch the code after it runs under.
type Guard struct {
	Call *ast.CallExpr
	// Kind is the guard's kind, from its type name in lower case ("request", "forever"),
	// or LatchGuard.
	Kind string
	// Check is the branch on the latch's outcome, for a LatchGuard.
	Check *ast.IfStmt
}

// LatchGuard is the kind of a Guard that is a hand-written latch (see LatchFact).
const LatchGuard = "latch"

// Site is one call that performs an effect.
type Site struct {
	Call *ast.CallExpr
	// Func is the declared function whose body holds the call.
	Func *Func
	// Name is the callee's name as messages print it.
	Name string
	// Effect is the catalogue entry of a direct provider call; nil for a call of a
	// function that performs an effect.
	Effect *catalog.Effect
	// Via names the provider call at the bottom; What and Class describe the effect.
	Via, What, Class string
	// Deep is the position of the provider call at the bottom when it is in this package.
	Deep token.Pos
	// Keyed: the call carries an idempotency key.
	Keyed bool
	// Guard is set when the call runs in a closure passed to a runtime guard.
	Guard *Guard
	// Callee is the called function.
	Callee *types.Func
	// Chain names the functions between the callee and the provider call, nearest first
	// (empty for a direct provider call or a callee that makes it itself).
	Chain []string
	// Param, Methods and URLArg: a conditional site (see EffectFact.Cond).
	Param   int
	Methods []string
	URLArg  int
	// Reported: the callee, of another package, is where its effect is reported.
	Reported bool

	pending  *edge // a conditional call of a conditional function, activated with the caller
	fromCond bool  // made plain from a conditional effect
	byURL    bool  // conditional on the URL its function is given (Param), not the method
}

// Unguarded reports whether the site is an effect no key or closure guard covers.
func (s *Site) Unguarded() bool { return !s.Keyed && s.Guard == nil }

// decides reports whether the site is an effect its function decides: unguarded, and
// not reported further down (at another package's function judged where it is).
func (s *Site) decides() bool { return s.Unguarded() && !s.Reported }

// GuardedCall is a call of a function declared with a directive.
type GuardedCall struct {
	Call   *ast.CallExpr
	Func   *Func // the caller (nil at package level)
	Callee *types.Func
	Fact   *GuardedFact
	File   *ast.File
}

// LocalGuard is a long-lived map or set checked, and written, as the guard of an effect.
type LocalGuard struct {
	Func  *Func
	Set   string    // the set as messages name it: "package-level map sent"
	Check ast.Node  // the check
	Write token.Pos // the write
	// Site is the first effect after the check; or, where there is none, Insert is the
	// first insert after it.
	Site   *Site
	Insert *SQLOp
	// Gate: the function is a dedupe gate (see findGates) keyed by Key; Site is an
	// effect of the package that its callers run only on its "first time".
	Gate bool
	Key  string
}

// catalogFlag is the repeatable -catalog flag.
type catalogFlag struct {
	mu    sync.Mutex
	files []string
}

func (f *catalogFlag) String() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.files, ",")
}

func (f *catalogFlag) Set(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			f.files = append(f.files, name)
		}
	}
	return nil
}

func (f *catalogFlag) get() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.files...)
}

// Doc is the effects analyzer's documentation.
const Doc = `find effects, keys and promises for the once checks

The effects analyzer reports nothing itself. It reads the provider catalogue, the //once:
directives and //oncelint:ignore comments of a package, and exports facts saying which
functions perform an effect no promise covers and which are declared with a directive.`

// NewAnalyzer returns an effects analyzer whose catalogue is the built-in one extended by
// the files named (relative names resolve from the module root of each package analyzed).
// Its flag -catalog adds more files.
func NewAnalyzer(catalogs []string) *analysis.Analyzer {
	cf := &catalogFlag{files: append([]string(nil), catalogs...)}
	a := &analysis.Analyzer{
		Name:       "onceeffects",
		Doc:        Doc,
		URL:        "https://pkg.go.dev/github.com/oncekit/once/analyzer",
		Run:        func(pass *analysis.Pass) (any, error) { return run(pass, cf.get()) },
		ResultType: reflect.TypeFor[*Result](),
		// Malformed directives are worth reporting in a package that does not compile.
		RunDespiteErrors: true,
		FactTypes:        []analysis.Fact{new(EffectFact), new(GuardedFact), new(SQLFact), new(PackageFact), new(SetHelperFact), new(LatchFact), new(SetAccessFact)},
	}
	a.Flags.Var(cf, "catalog", "extra provider catalogue `file`s (comma-separated or repeated), relative to the module root")
	return a
}

// CatalogFlag returns the -catalog flag of an analyzer made by NewAnalyzer, so a command
// can offer it under a shorter name.
func CatalogFlag(a *analysis.Analyzer) flag.Value {
	if f := a.Flags.Lookup("catalog"); f != nil {
		return f.Value
	}
	return nil
}

var catalogs sync.Map // "root\x00files" → *catalogLoad

type catalogLoad struct {
	once sync.Once
	cat  *catalog.Catalog
	err  error
}

// loadCatalog returns the catalogue for a package. A relative file name resolves from
// the package's module root or, failing that, the working directory's (go vet runs the
// tool in each package's directory; oncelint in the directory it was started from). The
// packages of the standard library and the module cache, analysed only for their facts,
// use the built-in catalogue when the file is not beside them.
func loadCatalog(pass *analysis.Pass, files []string) (*catalog.Catalog, error) {
	if len(files) == 0 || len(pass.Files) == 0 {
		return catalog.Default()
	}
	pkgDir := filepath.Dir(pass.Fset.File(pass.Files[0].Pos()).Name())
	roots := []string{moduleRoot(pkgDir)}
	if wd, err := os.Getwd(); err == nil {
		roots = append(roots, moduleRoot(wd))
	}
	root, ok := findRoot(roots, files)
	if !ok {
		if dependency(pkgDir) {
			return catalog.Default()
		}
		root = roots[0]
	}
	v, _ := catalogs.LoadOrStore(root+"\x00"+strings.Join(files, "\x00"), new(catalogLoad))
	l := v.(*catalogLoad)
	l.once.Do(func() { l.cat, l.err = catalog.Load(root, files...) })
	return l.cat, l.err
}

// findRoot returns the first root from which every relative file exists.
func findRoot(roots, files []string) (string, bool) {
	for _, root := range roots {
		ok := true
		for _, f := range files {
			if !filepath.IsAbs(f) {
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					ok = false
					break
				}
			}
		}
		if ok {
			return root, true
		}
	}
	return "", false
}

// dependency reports a package directory in the Go root or the module cache.
func dependency(dir string) bool {
	if goroot := runtime.GOROOT(); goroot != "" && strings.HasPrefix(dir, filepath.Join(goroot, "src")+string(filepath.Separator)) {
		return true
	}
	return strings.Contains(filepath.ToSlash(dir), "/pkg/mod/")
}

// moduleRoot returns the nearest directory at or above dir holding a go.mod, or dir.
func moduleRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

func run(pass *analysis.Pass, files []string) (any, error) {
	cat, err := loadCatalog(pass, files)
	if err != nil {
		return nil, fmt.Errorf("oncelint: %w", err)
	}
	res := &Result{Catalog: cat, ByObj: map[*types.Func]*Func{}, Ignores: ignore.Parse(pass.Fset, pass.Files)}
	helpers := setHelpers(pass)
	access := setAccessors(pass)
	if fastPath(pass, cat) && !mentionsSQL(pass.Files) && !sqltext.ImportsORM(pass.Pkg) {
		res.Fast = true
		return res, nil
	}
	for _, f := range pass.Files {
		if !hasDirectiveComment(f) {
			continue
		}
		ds, errs := directive.ParseFile(pass.Fset, f)
		res.Directives = append(res.Directives, ds...)
		res.DirectiveErrors = append(res.DirectiveErrors, errs...)
	}
	s := &scanner{pass: pass, cat: cat, res: res}
	s.collect()
	s.resolveConditional()
	s.markTransports()
	s.collectSQL()
	s.propagate()
	s.findLocalGuards()
	s.findHelperGuards(helpers)
	s.findGates(access)
	s.exportFacts()
	return res, nil
}

// fastPath reports a package with no effect to check: it imports no catalogued package,
// no package with facts, not the runtime, and holds no directive. (Run still walks one
// that holds SQL, for ONCE003 and ONCE005.)
func fastPath(pass *analysis.Pass, cat *catalog.Catalog) bool {
	for _, imp := range pass.Pkg.Imports() {
		if cat.HasEffects(imp.Path()) || imp.Path() == RuntimePath || pass.ImportPackageFact(imp, new(PackageFact)) {
			return false
		}
	}
	for _, f := range pass.Files {
		if hasDirectiveComment(f) {
			return false
		}
	}
	return true
}

func hasDirectiveComment(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			// "// once:" too: the parser explains that a space stops it being a directive.
			if strings.Contains(c.Text, "once:") && !strings.HasPrefix(c.Text, "//oncelint:") {
				return true
			}
		}
	}
	return false
}

// Analyzer is the effects analyzer with the built-in catalogue.
var Analyzer = NewAnalyzer(nil)
