package once004

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/astutil"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/model"
)

//go:embed doc.go
var doc string

// Code is the stable code of this check's findings.
const Code = "ONCE004"

// Analyzer reports calls bypassing generated guards, with the built-in catalogue.
var Analyzer = New(model.New(func() model.Config { return model.Config{} }))

// New returns the check reading the calls found by the shared analysis m.
func New(m *analysis.Analyzer) *analysis.Analyzer {
	return model.Check(Code, doc, m, func(pass *analysis.Pass, res *model.Result, rep *ignore.Reporter) {
		for _, b := range res.Bypasses {
			rep.Report(diagnostic(pass, b))
		}
	})
}

func diagnostic(pass *analysis.Pass, b *model.Bypass) analysis.Diagnostic {
	name := b.Callee.Name()
	d := analysis.Diagnostic{Pos: b.Call.Pos(), End: b.Call.End()}
	if wrapper := lookupWrapper(b); wrapper == nil {
		d.Message = fmt.Sprintf("call to %s bypasses its //once:%s promise, and %s is not generated yet: run go generate, then call %s",
			name, b.Kind, b.Wrapper, b.Wrapper)
	} else {
		d.Message = fmt.Sprintf("call to %s bypasses its //once:%s promise: a retry runs it again; call the generated %s instead",
			name, b.Kind, b.Wrapper)
		if fix, ok := suggestFix(pass, b, wrapper); ok {
			d.SuggestedFixes = []analysis.SuggestedFix{fix}
		}
	}
	if b.Decl.IsValid() {
		d.Related = []analysis.RelatedInformation{{Pos: b.Decl, Message: "the promise is declared here"}}
	}
	return d
}

// lookupWrapper finds the generated wrapper of the callee: a function of its package, or
// a method of its receiver's type.
func lookupWrapper(b *model.Bypass) *types.Func {
	obj := b.Callee.Pkg().Scope().Lookup(b.Wrapper)
	if recv := b.Callee.Signature().Recv(); recv != nil {
		obj, _, _ = types.LookupFieldOrMethod(recv.Type(), true, b.Callee.Pkg(), b.Wrapper)
	}
	fn, _ := obj.(*types.Func)
	return fn
}

// suggestFix rewrites the call to the wrapper, inserting the DB argument and the
// Outcome result, where that is mechanical.
func suggestFix(pass *analysis.Pass, b *model.Bypass, wrapper *types.Func) (analysis.SuggestedFix, bool) {
	call := b.Call
	wsig := wrapper.Signature()
	fsig := b.Callee.Signature()
	if wsig.Params().Len() < 2 || wsig.Results().Len() != fsig.Results().Len()+1 {
		return analysis.SuggestedFix{}, false
	}
	db := dbInScope(pass, b, wsig.Params().At(1).Type())
	src, err := pass.ReadFile(pass.Fset.File(call.Pos()).Name())
	if err != nil || db == "" {
		return analysis.SuggestedFix{}, false
	}
	text := func(n ast.Node) string {
		f := pass.Fset.File(n.Pos())
		return string(src[f.Offset(n.Pos()):f.Offset(n.End())])
	}
	// The wrapper takes ctx, db, then F's parameters other than the context and the
	// transaction it supplies itself.
	var args []string
	ctxArg := ""
	for i, a := range call.Args {
		if i >= fsig.Params().Len() {
			return analysis.SuggestedFix{}, false
		}
		switch t := types.TypeString(fsig.Params().At(i).Type(), nil); t {
		case "context.Context":
			ctxArg = text(a)
		case "github.com/jackc/pgx/v5.Tx":
		default:
			args = append(args, text(a))
		}
	}
	if ctxArg == "" || len(args) != wsig.Params().Len()-2 {
		return analysis.SuggestedFix{}, false
	}
	fun := b.Wrapper
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
	case *ast.SelectorExpr:
		fun = text(f.X) + "." + fun
	default:
		return analysis.SuggestedFix{}, false
	}
	newCall := fun + "(" + strings.Join(append([]string{ctxArg, db}, args...), ", ") + ")"
	edits := []analysis.TextEdit{{Pos: call.Pos(), End: call.End(), NewText: []byte(newCall)}}
	// The wrapper's extra Outcome result comes before the error.
	var parent ast.Node
	for _, f := range pass.Files {
		if path, _ := astutil.PathEnclosingInterval(f, call.Pos(), call.End()); len(path) > 1 && path[0] == call {
			parent = path[1]
		}
	}
	switch parent := parent.(type) {
	case *ast.ExprStmt:
	case *ast.AssignStmt:
		if len(parent.Rhs) != 1 || len(parent.Lhs) != fsig.Results().Len() || len(parent.Lhs) == 0 {
			return analysis.SuggestedFix{}, false
		}
		last := parent.Lhs[len(parent.Lhs)-1]
		edits = append(edits, analysis.TextEdit{Pos: last.Pos(), End: last.Pos(), NewText: []byte("_, ")})
	default:
		return analysis.SuggestedFix{}, false
	}
	return analysis.SuggestedFix{Message: "call " + b.Wrapper, TextEdits: edits}, true
}

// dbInScope names the one value the function can pass as the wrapper's DB: a parameter,
// or a field of the receiver, whose type is assignable to it.
func dbInScope(pass *analysis.Pass, b *model.Bypass, dbType types.Type) string {
	fn, ok := pass.TypesInfo.Defs[b.Func.Name].(*types.Func)
	if !ok {
		return ""
	}
	sig := fn.Signature()
	var found []string
	for p := range sig.Params().Variables() {
		if p.Name() != "" && p.Name() != "_" && types.AssignableTo(p.Type(), dbType) {
			found = append(found, p.Name())
		}
	}
	if len(found) == 0 && sig.Recv() != nil && sig.Recv().Name() != "" {
		t := sig.Recv().Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if st, ok := t.Underlying().(*types.Struct); ok {
			for f := range st.Fields() {
				if types.AssignableTo(f.Type(), dbType) {
					found = append(found, sig.Recv().Name()+"."+f.Name())
				}
			}
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}
