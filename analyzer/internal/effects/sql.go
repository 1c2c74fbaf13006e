package effects

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/sqltext"
	"github.com/oncekit/once/internal/directive"
)

// SQLFact summarises, for a function's callers, the SQL it sends itself or through the
// functions it calls: the tables it reads and returns what it found (a look-up), the
// inserts and updates it makes, the locks it takes. With it ONCE005 sees a look-up in one
// helper decide an insert made by another, and ONCE003 sees the insert a per-process set
// stands guard over.
//
// A table the function both reads and inserts into is left out (the function is a
// check-then-insert of its own, judged where it is), as is an insert into a table a
// //once: ... table= directive of its package declares (the insert is the check), and
// everything a function declared with a directive sends (its promise covers it).
type SQLFact struct {
	Stmts []sqltext.Stmt
}

// AFact marks SQLFact as a fact.
func (*SQLFact) AFact() {}

func (f *SQLFact) String() string {
	var parts []string
	for _, st := range f.Stmts {
		parts = append(parts, describe(st))
	}
	return "sql(" + strings.Join(parts, "; ") + ")"
}

// describe names a summarised statement for facts and tests: "reads runs", "inserts runs".
func describe(st sqltext.Stmt) string {
	switch st.Kind {
	case sqltext.Read:
		s := "reads " + strings.Join(st.Tables, ",")
		if st.RowLock {
			s += " for update"
		}
		return s
	case sqltext.Insert:
		s := "inserts " + st.Table
		switch {
		case st.Upsert && st.UpdateWhere:
			s += " or updates where"
		case st.Upsert && st.Accumulates:
			s += " or adds"
		case st.Upsert:
			s += " or updates"
		case st.OnConflict:
			s += " or nothing"
		}
		return s
	case sqltext.Update:
		return "updates " + st.Table
	case sqltext.Lock:
		return "locks"
	}
	return "?"
}

// SQLOp is one statement a function sends: by a query method, or through a call of a
// function that sends it.
type SQLOp struct {
	Call *ast.CallExpr
	Stmt sqltext.Stmt
	// Via is the function called, for a statement a helper sends; nil for one sent here.
	Via *types.Func
	// Guarded: the call is in a closure run by a runtime guard that holds a promise
	// (any but a request memo).
	Guarded bool
}

// Declared reports whether a //once: ... table= directive of the package declares table.
func (r *Result) Declared(table string) bool {
	for _, t := range r.Tables {
		if sqltext.SameTable(t, table) {
			return true
		}
	}
	return false
}

// sqlLike matches the statements oncelint reads, in lower case.
var sqlLike = regexp.MustCompile(`\binsert\s+into\b|\bdelete\s+from\b|\bselect\b[\s\S]*\b(?:from|pg_(?:try_)?advisory)|\bupdate\s+\S+\s+set\b|\block\s+table\b`)

// mentionsSQL reports whether a file holds a string that may be a statement ONCE003 or
// ONCE005 reads: a package with none, and no import exporting facts, sends no SQL the
// checks could judge.
func mentionsSQL(files []*ast.File) bool {
	found := false
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				low := strings.ToLower(lit.Value)
				found = (strings.Contains(low, "insert") || strings.Contains(low, "select") ||
					strings.Contains(low, "update") || strings.Contains(low, "lock") || strings.Contains(low, "delete")) && sqlLike.MatchString(low)
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// sqlCall is a call of a function of the package, which may send SQL.
type sqlCall struct {
	call    *ast.CallExpr
	to      *Func
	guarded bool
}

// collectSQL finds the statements each function sends, directly and through the
// functions it calls (here, or in packages whose facts say so), and the summary each
// function offers its callers.
func (s *scanner) collectSQL() {
	for _, d := range s.res.Directives {
		if d.HasTable() {
			s.res.Tables = append(s.res.Tables, d.Table)
		}
	}
	direct := map[*Func][]SQLOp{}
	helpers := map[*Func][]sqlCall{}
	for _, fn := range s.res.Funcs {
		direct[fn], helpers[fn], fn.Serializable = s.scanSQL(fn)
	}
	// A summary depends on those of the functions called: iterate to a fixpoint. The
	// exclusions make it non-monotone in a recursive cycle, so the rounds are bounded.
	summary := map[*Func][]sqltext.Stmt{}
	for range 8 {
		changed := false
		for _, fn := range s.res.Funcs {
			fn.SQL = withHelpers(direct[fn], helpers[fn], summary)
			sum := s.summarize(fn)
			if !reflect.DeepEqual(sum, summary[fn]) {
				summary[fn] = sum
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for _, fn := range s.res.Funcs {
		fn.SQL = withHelpers(direct[fn], helpers[fn], summary)
		fn.sqlSummary = summary[fn]
	}
}

// withHelpers merges the statements sent directly with those sent by the helpers called,
// in source order.
func withHelpers(direct []SQLOp, calls []sqlCall, summary map[*Func][]sqltext.Stmt) []SQLOp {
	ops := slices.Clone(direct)
	for _, c := range calls {
		for _, st := range summary[c.to] {
			ops = append(ops, SQLOp{Call: c.call, Stmt: st, Via: c.to.Obj, Guarded: c.guarded})
		}
	}
	slices.SortStableFunc(ops, func(a, b SQLOp) int { return int(a.Call.Pos()) - int(b.Call.Pos()) })
	return ops
}

// scanSQL lists the statements fn sends itself, with those of imported functions whose
// facts summarise them, and its calls of functions of the package.
func (s *scanner) scanSQL(fn *Func) (ops []SQLOp, calls []sqlCall, serializable bool) {
	info := s.pass.TypesInfo
	var stack []ast.Node
	var closures []ast.Node // closures run by a runtime guard that holds a promise
	ast.Inspect(fn.Decl.Body, func(n ast.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(closures) > 0 && closures[len(closures)-1] == top {
				closures = closures[:len(closures)-1]
			}
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncLit:
			if len(stack) >= 2 {
				if call, ok := stack[len(stack)-2].(*ast.CallExpr); ok && call.Fun != n {
					if kind, ok := s.runtimeGuardKind(call); ok && kind != string(directive.Request) {
						closures = append(closures, n)
					}
				}
			}
		case *ast.SelectorExpr:
			if obj := info.Uses[n.Sel]; obj != nil && obj.Pkg() != nil {
				switch obj.Pkg().Path() + "." + obj.Name() {
				case "database/sql.LevelSerializable", "github.com/jackc/pgx/v5.Serializable":
					serializable = true
				}
			}
		case *ast.CallExpr:
			// Under a runtime guard, or after a hand-written latch was taken: no second
			// call gets here at the same time, nor a repeat.
			guarded := len(closures) > 0 || fn.UnderLatch(n.Pos())
			if st, ok := sqltext.Sent(info, n); ok {
				ops = append(ops, SQLOp{Call: n, Stmt: st, Guarded: guarded})
				return true
			}
			callee, ok := typeutil.Callee(info, n).(*types.Func)
			if !ok {
				return true
			}
			callee = callee.Origin()
			if callee.Pkg() == s.pass.Pkg {
				if to := s.res.ByObj[callee]; to != nil && to != fn {
					calls = append(calls, sqlCall{call: n, to: to, guarded: guarded})
				}
				return true
			}
			var fact SQLFact
			if callee.Pkg() != nil && s.pass.ImportObjectFact(callee, &fact) {
				for _, st := range fact.Stmts {
					ops = append(ops, SQLOp{Call: n, Stmt: st, Via: callee, Guarded: guarded})
				}
			}
		}
		return true
	})
	return ops, calls, serializable
}

// summarize returns what fn's callers need to know of the SQL it sends.
func (s *scanner) summarize(fn *Func) []sqltext.Stmt {
	if fn.Test || fn.Directive != nil {
		return nil
	}
	var reads, writes []string
	for _, op := range fn.SQL {
		switch op.Stmt.Kind {
		case sqltext.Read:
			reads = append(reads, op.Stmt.Tables...)
		case sqltext.Insert, sqltext.Update:
			writes = append(writes, op.Stmt.Table)
		}
	}
	// A look-up tells its caller what it found only through its results.
	lookup := fn.Obj.Signature().Results().Len() > 0
	var out []sqltext.Stmt
	add := func(st sqltext.Stmt) {
		st.Text = ""
		for _, o := range out {
			if reflect.DeepEqual(o, st) {
				return
			}
		}
		out = append(out, st)
	}
	for _, op := range fn.SQL {
		st := op.Stmt
		if op.Guarded {
			continue
		}
		switch st.Kind {
		case sqltext.Read:
			var tables []string
			for _, t := range st.Tables {
				if !hasTable(writes, t) {
					tables = append(tables, t)
				}
			}
			if lookup && len(tables) > 0 {
				st.Tables = tables
				add(st)
			}
		case sqltext.Insert, sqltext.Update:
			if !hasTable(reads, st.Table) && !s.res.Declared(st.Table) {
				add(st)
			}
		case sqltext.Lock:
			add(st)
		}
	}
	if fn.Serializable {
		add(sqltext.Stmt{Kind: sqltext.Lock})
	}
	return out
}

func hasTable(tables []string, table string) bool {
	for _, t := range tables {
		if sqltext.SameTable(t, table) {
			return true
		}
	}
	return false
}
