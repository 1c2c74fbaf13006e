package once005

import (
	"cmp"
	"go/token"
	"go/types"
	"regexp"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// stmtText is a statement's SQL text; the values its placeholders for inserted and set
// columns stand for, what a read fills and the handle it runs on, where a builder says.
type stmtText struct {
	q           string
	args, dests []ssa.Value
	handle      ssa.Value
}

func (b stmtText) sent(e end, lib string) (sent, bool) {
	st := sqlfacts.Parse(b.q)
	return sent{op: Op{Stmt: st, ErrAbsent: e.flags&fAbsent != 0 && st.Kind != sqlfacts.Other && !st.OneRow, ORM: lib}, handle: b.handle, exists: st.Exists || e.flags&fExists != 0, args: b.args, dests: b.dests}, st.Kind != sqlfacts.Other
}

// sqlText returns the SQL text v holds (see text), or the statement a query builder's
// ToSql, MustSql or String renders.
func (r *reader) sqlText(v ssa.Value) (stmtText, bool) {
	c, _ := v.(*ssa.Call)
	if x, ok := v.(*ssa.Extract); ok && x.Index == 0 { // q, args, err := b.ToSql()
		c, _ = x.Tuple.(*ssa.Call)
	}
	if fn := (*types.Func)(nil); c != nil {
		if fn = calleeOf(&c.Call); fn != nil && renders[fn.Name()] && recvType(fn) != nil {
			if lib, _ := r.library(recvType(fn), ""); lib != nil {
				recv, _ := argsOf(&c.Call)
				return r.built(chain(recv, func(u *types.Named) bool { return u.Obj().Pkg() == fn.Pkg() }))
			}
		}
	}
	q, ok := r.text(v)
	return stmtText{q: q}, ok
}

// built renders the statement a query builder's chain writes (squirrel's, sqlf's) as SQL
// text with a ? for each value it inserts or sets, and those values; root, before the
// chain, is a package function starting it (sq.Select) or the handle it runs on.
func (r *reader) built(links []link, root ssa.Value) (b stmtText, ok bool) {
	if c, isCall := root.(*ssa.Call); isCall {
		if fn := calleeOf(&c.Call); fn != nil && fn.Pkg() != nil && libraryPaths[fn.Pkg().Path()] && recvType(fn) == nil && parts[fn.Name()] != "" {
			links = append(links, link{fn.Name(), c.Call.Args})
		}
	}
	var verb, table, prefix, suffix, where string
	var cols []string
	for i := len(links) - 1; i >= 0; i-- {
		args := spread(links[i].args)
		if len(args) == 0 {
			continue
		}
		first, known := r.text(args[0])
		switch part := parts[links[i].name]; part {
		case "select", "columns":
			verb = cmp.Or(verb, part)
			for _, a := range args {
				if s, ok := r.text(a); ok {
					cols = append(cols, s)
				}
			}
		case "insert", "update", "delete", "from":
			verb, table = cmp.Or(strings.TrimPrefix(part, "from"), verb), first
		case "where":
			if ks, _ := r.fieldsSet(args[0]); !known && len(ks) > 0 {
				first = strings.Join(ks, " = ? and ") + " = ?" // sq.Eq{"feed_id": id}
			}
			where += map[bool]string{true: " where (", false: " and ("}[where == ""] + first + ")"
		case "values":
			b.args = append(b.args, args...)
		case "set":
			cols, b.args = append(cols, first), append(b.args, args[len(args)-1])
		case "setmap":
			ks, _ := r.fieldsSet(args[0])
			cols, b.args = append(cols, ks...), append(b.args, make([]ssa.Value, len(ks))...)
		case "prefix":
			prefix += first + " "
		case "suffix":
			suffix += " " + first
		case "dest":
			b.dests = append(b.dests, args...)
		case "handle":
			b.handle = args[0]
		}
	}
	b.q = map[string]string{
		"insert": "insert into " + table + " (" + strings.Join(cols, ", ") + ") values (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")",
		"update": "update " + table + " set " + strings.Join(cols, " = ?, ") + " = ?" + where,
		"delete": "delete from " + table + where,
	}[verb]
	b.q = prefix + cmp.Or(b.q, "select "+strings.Join(cols, ", ")+" from "+table+where) + suffix
	return b, table != ""
}

// verbRE matches fmt's verbs; holeRE, a part not known before a name.
var verbRE, holeRE = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`), regexp.MustCompile("\x00+([A-Za-z_])")

const textBudget = 512

// text returns the string v holds: a constant, or one joined by + or made by fmt.Sprintf,
// or returned by a function of the package with one return from its arguments. A part it
// cannot know is left out where a name follows (a prefix: tenant + "tags") and written 0
// elsewhere. It reads at most textBudget values.
func (r *reader) text(v ssa.Value) (string, bool) {
	r.budget = textBudget
	s := r.textOf(v, nil, 0)
	return strings.ReplaceAll(holeRE.ReplaceAllString(s, "$1"), "\x00", "0"), strings.Trim(s, "\x00") != ""
}

// textOf returns the string v holds, a NUL for each part not known; env holds the text
// of a function's parameters where its call is read.
func (r *reader) textOf(v ssa.Value, env map[*ssa.Parameter]string, depth int) string {
	if r.budget--; r.budget < 0 {
		return "\x00"
	} else if s, ok := str(v); ok {
		return s
	}
	switch x := unwrap(v).(type) {
	case *ssa.Parameter:
		if s, ok := env[x]; ok {
			return s
		}
	case *ssa.BinOp:
		if x.Op == token.ADD { // a long chain nests to the left: only calls count as depth
			return r.textOf(x.X, env, depth) + r.textOf(x.Y, env, depth)
		}
	case *ssa.Call:
		fn, args := x.Call.StaticCallee(), x.Call.Args
		if fn != nil && fn.Object() != nil && fn.Object().Pkg() != nil && fn.Object().Pkg().Path()+"."+fn.Name() == "fmt.Sprintf" && depth < 8 {
			if format, ok := str(args[0]); ok {
				vals, n := spread(args[1:]), 0
				return verbRE.ReplaceAllStringFunc(format, func(verb string) string {
					if verb == "%%" || n == len(vals) {
						return map[bool]string{true: "%", false: "\x00"}[verb == "%%"]
					}
					n++
					return r.textOf(vals[n-1], env, depth+1)
				})
			}
		}
		if fn != nil && fn.Pkg != nil && fn.Pkg.Pkg == r.pass.Pkg && fn.Signature.Results().Len() == 1 && depth < 8 {
			inner, ret := map[*ssa.Parameter]string{}, []*ssa.Return(nil)
			for i, p := range fn.Params {
				inner[p] = r.textOf(args[i], env, depth+1)
			}
			for _, b := range fn.Blocks {
				if rt, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
					ret = append(ret, rt)
				}
			}
			if len(ret) == 1 {
				return r.textOf(ret[0].Results[0], inner, depth+1)
			}
		}
	}
	return "\x00"
}
