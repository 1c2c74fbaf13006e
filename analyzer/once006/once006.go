package once006

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/analyzer/internal/sqlfacts"
	"github.com/oncekit/once/internal/directive"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE006"

// Analyzer reports promises of the wrong length, with the built-in catalogue.
var Analyzer = New(model.New(func() model.Config { return model.Config{} }))

// New returns the check reading the shared analysis m.
func New(m *analysis.Analyzer) *analysis.Analyzer {
	return model.Check(Code, doc, m, func(pass *analysis.Pass, res *model.Result, rep *ignore.Reporter) {
		for _, r := range res.Requests {
			rep.Report(analysis.Diagnostic{Pos: r.Pos, Message: fmt.Sprintf(
				"%s lasts one request, but it reaches %s, which %s: the next request (a retry, a second tab) %s again; declare a longer promise (provider, forever, open or episode)",
				r.Guard, r.Effect.Via, r.Effect.What, r.Effect.What)})
		}
		for fn, d := range res.Declared {
			if d.HasTable() && d.Func.Body != nil {
				checkTable(pass, rep, fn, d)
			}
		}
	})
}

// sqlMethods are the methods that send SQL, by identity: the argument index of the
// statement (the receiver not counted).
var sqlMethods = map[string]int{
	"(github.com/jackc/pgx/v5.Tx).Exec": 1, "(github.com/jackc/pgx/v5.Tx).Query": 1, "(github.com/jackc/pgx/v5.Tx).QueryRow": 1,
	"(*github.com/jackc/pgx/v5.Conn).Exec": 1, "(*github.com/jackc/pgx/v5.Conn).Query": 1, "(*github.com/jackc/pgx/v5.Conn).QueryRow": 1,
	"(*github.com/jackc/pgx/v5/pgxpool.Pool).Exec": 1, "(*github.com/jackc/pgx/v5/pgxpool.Pool).Query": 1, "(*github.com/jackc/pgx/v5/pgxpool.Pool).QueryRow": 1,
	"(github.com/oncekit/once/runtime.DB).Exec": 1, "(github.com/oncekit/once/runtime.DB).Query": 1, "(github.com/oncekit/once/runtime.DB).QueryRow": 1,
	"(*database/sql.Tx).Exec": 0, "(*database/sql.Tx).ExecContext": 1, "(*database/sql.Tx).QueryRow": 0, "(*database/sql.Tx).QueryRowContext": 1,
	"(*database/sql.Tx).Query": 0, "(*database/sql.Tx).QueryContext": 1,
	"(*database/sql.DB).Exec": 0, "(*database/sql.DB).ExecContext": 1, "(*database/sql.DB).QueryRow": 0, "(*database/sql.DB).QueryRowContext": 1,
	"(*database/sql.DB).Query": 0, "(*database/sql.DB).QueryContext": 1,
}

// handles are the types of a database handle a function may be given.
var handles = map[string]bool{
	"github.com/jackc/pgx/v5.Tx": true, "github.com/jackc/pgx/v5.Conn": true, "github.com/jackc/pgx/v5/pgxpool.Pool": true,
	"github.com/oncekit/once/runtime.DB": true, "database/sql.Tx": true, "database/sql.DB": true, "database/sql.Conn": true,
}

var insertRE = regexp.MustCompile(`(?is)\binsert\s+into\s+((?:"?[a-z_][a-z0-9_$]*"?\.)?"?[a-z_][a-z0-9_$]*"?)`)

// checkTable reports the inserts into the declared table that are not the promise's
// claim: without the derived conflict clause, or through another handle than the one
// the function is given.
func checkTable(pass *analysis.Pass, rep *ignore.Reporter, fn *types.Func, d *directive.Directive) {
	given := slices.DeleteFunc(slices.Collect(fn.Signature().Params().Variables()), func(p *types.Var) bool {
		return !handles[strings.TrimPrefix(types.TypeString(p.Type(), nil), "*")]
	})
	clause := normalize(d.ConflictClause())
	ast.Inspect(d.Func.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, _ := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		var tv types.TypeAndValue
		if m, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func); ok && sel != nil {
			if idx, ok := sqlMethods[m.FullName()]; ok && idx < len(call.Args) {
				tv = pass.TypesInfo.Types[call.Args[idx]]
			}
		}
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			return true
		}
		text := constant.StringVal(tv.Value)
		if match := insertRE.FindStringSubmatch(text); match == nil || !sqlfacts.SameTable(strings.ToLower(match[1]), strings.ToLower(d.Table)) {
			return true
		}
		if clause != "" && !strings.Contains(normalize(text), clause) {
			rep.Report(analysis.Diagnostic{Pos: call.Pos(), End: call.End(), Message: fmt.Sprintf(
				"insert into %s does not use the conflict clause //once:%s table=%s declares: without %q, text for text, a duplicate is not the no-op the promise needs; append the generated %s constant",
				d.Table, d.Kind, d.Table, d.ConflictClause(), directive.ConflictName(fn.Name())),
				Related: []analysis.RelatedInformation{{Pos: d.Slash, Message: "the promise is declared here"}}})
		}
		if len(given) > 0 && !rootedIn(pass, sel.X, given) {
			rep.Report(analysis.Diagnostic{Pos: call.Pos(), End: call.End(), Message: fmt.Sprintf(
				"insert into %s goes through %s, not the %s %s is given: the guard runs %s in that transaction, and an insert through another handle commits outside the promise; send it through %s",
				d.Table, types.ExprString(sel.X), given[0].Name(), fn.Name(), fn.Name(), given[0].Name()),
				Related: []analysis.RelatedInformation{{Pos: d.Slash, Message: "the promise is declared here"}}})
		}
		return true
	})
}

// rootedIn reports whether the expression names one of the variables.
func rootedIn(pass *analysis.Pass, x ast.Expr, vars []*types.Var) bool {
	id, ok := ast.Unparen(x).(*ast.Ident)
	return ok && slices.ContainsFunc(vars, func(v *types.Var) bool { return pass.TypesInfo.Uses[id] == v })
}

func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
