package once005

import (
	"go/ast"
	"go/types"
	"strings"

	"github.com/oncekit/once/analyzer/internal/effects"
	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// lockedByCallers reports whether every call of fn is made after its caller took a lock
// that serialises fn's check and insert on table: an advisory or table lock, or a row of
// another table held FOR UPDATE (a parent row, the users whose activity is recorded),
// taken through the transaction handle the caller then passes fn. The check-then-insert
// of a helper that only ever runs inside such a transaction is as serialised as if it
// took the lock itself.
//
// Only an unexported function that the package calls, and never uses as a value, is
// judged by its callers: any other may be called from where no lock is held.
func (c *checker) lockedByCallers(fn *effects.Func, table string) bool {
	return c.byEveryCaller(fn, func(g *effects.Func, call *ast.CallExpr) bool {
		return g.UnderLatch(call.Pos()) || lockedAt(c.pass.TypesInfo, g, call, table) || c.latchedByCallers(g, 1)
	})
}

// latchedByCallers reports whether every call of fn runs once a hand-written latch was
// taken, in its caller or, for a caller that is itself an unexported function the
// package only calls, in every caller of that one, up to a few levels (a cron that
// takes its task lock, then hands each batch to a helper that works on each user). A
// latch, unlike a transaction's lock, covers whatever runs after it, whatever handle
// it is given.
func (c *checker) latchedByCallers(fn *effects.Func, depth int) bool {
	if depth > 3 {
		return false
	}
	return c.byEveryCaller(fn, func(g *effects.Func, call *ast.CallExpr) bool {
		return g.UnderLatch(call.Pos()) || c.latchedByCallers(g, depth+1)
	})
}

// byEveryCaller reports whether fn is an unexported function the package calls, never
// uses as a value, and whose every call (outside tests and fn itself) satisfies ok.
func (c *checker) byEveryCaller(fn *effects.Func, ok func(g *effects.Func, call *ast.CallExpr) bool) bool {
	if fn.Obj.Exported() {
		return false
	}
	info := c.pass.TypesInfo
	if c.byDecl == nil {
		c.byDecl = map[*ast.FuncDecl]*effects.Func{}
		for _, g := range c.res.Funcs {
			c.byDecl[g.Decl] = g
		}
	}
	calls := 0
	locked := true
	for _, f := range c.pass.Files {
		for _, decl := range f.Decls {
			g := c.byDecl[asFuncDecl(decl)]
			var stack []ast.Node
			ast.Inspect(decl, func(n ast.Node) bool {
				if !locked {
					return false
				}
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				stack = append(stack, n)
				id, isID := n.(*ast.Ident)
				if !isID {
					return true
				}
				if used, isFn := info.Uses[id].(*types.Func); !isFn || used.Origin() != fn.Obj {
					return true
				}
				call := calledBy(stack)
				switch {
				case call == nil || g == nil:
					locked = false // used as a value, or outside a function: any caller
				case g == fn || g.Test:
				default:
					calls++
					locked = ok(g, call)
				}
				return true
			})
		}
	}
	return locked && calls > 0
}

func asFuncDecl(d ast.Decl) *ast.FuncDecl {
	fd, _ := d.(*ast.FuncDecl)
	return fd
}

// calledBy returns the call whose function the identifier at the top of stack is
// (f(...), x.f(...)), or nil when it is used otherwise.
func calledBy(stack []ast.Node) *ast.CallExpr {
	i := len(stack) - 2
	if i >= 0 {
		if sel, ok := stack[i].(*ast.SelectorExpr); ok && sel.Sel == stack[i+1] {
			i--
		}
	}
	if i >= 0 {
		if call, ok := stack[i].(*ast.CallExpr); ok && ast.Unparen(call.Fun) == stack[i+1] {
			return call
		}
	}
	return nil
}

// lockedAt reports whether, before call in g, g takes a lock serialising table through a
// transaction handle that call is given too.
func lockedAt(info *types.Info, g *effects.Func, call *ast.CallExpr, table string) bool {
	handles := handlesOf(info, call)
	if len(handles) == 0 {
		return false
	}
	for _, op := range g.SQL {
		if op.Call.Pos() >= call.Pos() {
			break
		}
		if op.Guarded || !locks(op.Stmt, table) {
			continue
		}
		for h := range handlesOf(info, op.Call) {
			if handles[h] {
				return true
			}
		}
	}
	return false
}

// locks reports a statement that takes a lock serialising inserts into table.
func locks(st sqltext.Stmt, table string) bool {
	return st.Kind == sqltext.Lock || (st.Kind == sqltext.Read && st.RowLock && !readsTable(st, table))
}

// handlesOf returns the transaction handles a call mentions, in its receiver chain or
// its arguments: local variables or parameters of a database handle type (a *sql.Tx,
// an *xorm.Session, a *gorm.DB, a bun.Tx, an ent *Tx, ...). A package-level handle is
// the pool, not a transaction: a lock taken through it ends with its statement.
func handlesOf(info *types.Info, call *ast.CallExpr) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	ast.Inspect(call, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		v, ok := info.Uses[id].(*types.Var)
		if !ok || v.IsField() || v.Parent() == nil || v.Parent() == v.Pkg().Scope() {
			return true
		}
		if isTxHandle(v.Type()) {
			out[v] = true
		}
		return true
	})
	return out
}

// txHandleTypes are the database handle types that carry a transaction or a session,
// by package path and type name.
var txHandleTypes = map[string]bool{
	"database/sql.Tx": true, "database/sql.Conn": true,
	"github.com/jackc/pgx/v5.Tx": true, "github.com/jackc/pgx/v5.Conn": true,
	"github.com/jackc/pgx/v5/pgxpool.Conn": true, "github.com/jackc/pgx/v5/pgxpool.Tx": true,
	"github.com/jmoiron/sqlx.Tx": true, "github.com/jmoiron/sqlx.Conn": true,
	"xorm.io/xorm.Session":      true,
	"gorm.io/gorm.DB":           true,
	"github.com/uptrace/bun.Tx": true, "github.com/uptrace/bun.Conn": true, "github.com/uptrace/bun.IDB": true,
}

// isTxHandle reports a database handle that may hold a transaction: one of
// txHandleTypes, or a type of the application's named Tx (ent's generated *ent.Tx, a
// repository's own Tx interface).
func isTxHandle(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	name := n.Obj().Name()
	if name == "Session" && sqltext.IsXorm(n.Obj().Pkg()) {
		return true // a fork of xorm's
	}
	return txHandleTypes[n.Obj().Pkg().Path()+"."+name] || name == "Tx" || strings.HasSuffix(name, "Tx")
}
