package once005

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/analyzer/internal/sqlfacts"
	"github.com/oncekit/once/internal/directive"
)

// reader holds one package's analysis: its functions' statements and summaries.
type reader struct {
	pass       *analysis.Pass
	rep        *ignore.Reporter
	schemas    []string
	own        PackageFact
	declared   []sqlfacts.Unique // by the package's table= directives
	directives map[*ast.FuncDecl]*directive.Directive
	drivers    []types.Type // the database handles of the packages imported
	funcs      map[*ssa.Function]*fnInfo
	order      []*fnInfo
	sites      map[*ssa.Function][]site
	escaped    map[*ssa.Function]bool // used other than by calling it
	follows    map[*opAt]*taint
	models     map[[2]any]bool // a model's tags, read once per table it is written to (an ORM each)
	at         ssa.Instruction // the call being read
	reported   map[token.Pos]bool
	budget     int               // how many more values text may read
	all        []sqlfacts.Unique // the unique constraints seen, read once
	schemaErr  error
}

// fnInfo is one function (or closure) of the package.
type fnInfo struct {
	fn                           *ssa.Function
	ops                          []*opAt
	covered, serial, dup, judged bool // a promise or a runtime guard; serializable; handles 23505; no test, not generated
	fact                         FuncFact
	state                        uint8
}

// opAt is a statement a function sends at one of its calls, itself or by a helper.
type opAt struct {
	sent
	instr ssa.CallInstruction
	via   *types.Func
}

type site struct {
	in   *fnInfo
	call ssa.CallInstruction
}

// build makes the package's SSA, reads what each function sends and exports it.
func (r *reader) build() {
	prog := model.BuildSSA(r.pass).Prog
	r.follows, r.models, r.sites, r.escaped = map[*opAt]*taint{}, map[[2]any]bool{}, map[*ssa.Function][]site{}, map[*ssa.Function]bool{}
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		r.order = append(r.order, r.info(fn))
		for _, anon := range fn.AnonFuncs {
			add(anon)
		}
	}
	for _, f := range r.pass.Files {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				if fn := prog.FuncValue(r.pass.TypesInfo.Defs[fd.Name].(*types.Func)); fn != nil && fn.Blocks != nil {
					add(fn)
				}
			}
		}
	}
	for _, fi := range r.order {
		r.ensure(fi) // its fact is final: what it calls is read first
		if obj, ok := fi.fn.Object().(*types.Func); ok && (len(fi.fact.Ops) > 0 || fi.fact.HandlesDup) {
			r.pass.ExportObjectFact(obj, &fi.fact)
		}
	}
}

// info returns a function's record; a closure is covered and judged as its parent.
func (r *reader) info(fn *ssa.Function) *fnInfo {
	if fi := r.funcs[fn]; fi != nil {
		return fi
	}
	fi := &fnInfo{fn: fn}
	if r.funcs[fn] = fi; fn.Parent() != nil {
		p := r.info(fn.Parent())
		fi.covered, fi.serial, fi.judged = p.covered, p.serial, p.judged
	}
	if fd, ok := fn.Syntax().(*ast.FuncDecl); ok {
		name := r.pass.Fset.File(fd.Pos()).Name()
		fi.covered = r.directives[fd] != nil && r.directives[fd].Kind != directive.Request
		fi.judged = !strings.HasSuffix(name, "_test.go") && !slices.ContainsFunc(r.pass.Files, func(f *ast.File) bool {
			return ast.IsGenerated(f) && r.pass.Fset.File(f.Pos()).Name() == name
		})
	}
	if fn.Syntax() != nil {
		ast.Inspect(fn.Syntax(), func(n ast.Node) bool { return r.names(fi, fn.Syntax(), n) })
	}
	return fi
}

// names notes a serializable isolation level or a unique violation a function names.
func (r *reader) names(fi *fnInfo, syn, n ast.Node) bool {
	if id, ok := n.(*ast.Ident); ok {
		if obj := r.pass.TypesInfo.Uses[id]; obj != nil && obj.Pkg() != nil {
			key := obj.Pkg().Path() + "." + obj.Name()
			fi.serial = fi.serial || serializable[key]
			fi.dup = fi.dup || slices.Contains(duplicate, key) || r.generatedCheck(obj)
		}
	}
	if e, ok := n.(ast.Expr); ok {
		if s, ok := r.constString(e); ok {
			fi.dup = fi.dup || slices.ContainsFunc(duplicate, func(d string) bool { return strings.Contains(s, d) })
		}
	}
	_, closure := n.(*ast.FuncLit)
	return !closure || n == syn
}

// ensure reads what a function sends, itself or by what it calls, and summarises it.
func (r *reader) ensure(fi *fnInfo) {
	if fi.state != 0 {
		return // done, or a recursive call: its summary so far
	}
	fi.state = 1
	for _, b := range fi.fn.Blocks {
		for _, instr := range b.Instrs {
			r.operands(fi, instr)
			ci, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			c := ci.Common()
			r.at = ci
			if s, ok := r.read(c); ok {
				fi.ops = append(fi.ops, &opAt{sent: s, instr: ci})
				if mt := [2]any{s.model, s.op.Table()}; s.model != nil && !r.models[mt] {
					r.models[mt] = true
					r.own.Uniques = append(r.own.Uniques, sqlfacts.TagUniques(s.op.Table(), s.model.Underlying().(*types.Struct))...)
				}
				continue
			}
			var f FuncFact
			fn := calleeOf(c)
			if callee := c.StaticCallee(); callee != nil && callee.Pkg != nil && callee.Pkg.Pkg == r.pass.Pkg {
				r.ensure(r.info(callee))
				r.helperOps(fi, ci, &r.info(callee).fact, callee.Object())
			} else if fn != nil && fn.Pkg() != r.pass.Pkg && r.pass.ImportObjectFact(fn, &f) {
				r.helperOps(fi, ci, &f, fn)
			} else if c.IsInvoke() {
				for _, impl := range r.implementations(c, fi.fn.Prog) { // a repository interface implemented beside its caller
					r.ensure(r.info(impl))
					r.helperOps(fi, ci, &r.info(impl).fact, impl.Object())
				}
			}
			for _, a := range c.Args {
				if mc, ok := a.(*ssa.MakeClosure); ok {
					g := r.info(mc.Fn.(*ssa.Function))
					// A runtime guard holding a promise runs its closure under it.
					g.covered = g.covered || fn != nil && model.GuardHolds(model.FuncName(fn))
					r.ensure(g)
					r.helperOps(fi, ci, &g.fact, nil)
				}
			}
		}
	}
	fi.fact, fi.state = r.summarize(fi), 2
}

// operands notes the package's functions called, and those escaping as values.
func (r *reader) operands(fi *fnInfo, instr ssa.Instruction) {
	ci, _ := instr.(ssa.CallInstruction)
	for _, op := range instr.Operands(nil) {
		switch fn, ok := (*op).(*ssa.Function); {
		case !ok || fn.Pkg == nil || fn.Pkg.Pkg != r.pass.Pkg:
		case ci != nil && !ci.Common().IsInvoke() && ci.Common().Value == fn:
			r.sites[fn] = append(r.sites[fn], site{fi, ci})
		default:
			r.escaped[fn] = true
		}
	}
}

// helperOps adds what a callee sends, by its fact, through the arguments it is given.
func (r *reader) helperOps(fi *fnInfo, ci ssa.CallInstruction, f *FuncFact, obj types.Object) {
	via, _ := obj.(*types.Func)
	var absent, exists bool
	for _, res := range f.Results {
		absent, exists = absent || res&resAbsent != 0, exists || res&resExists != 0
	}
	arg := func(i int) ssa.Value { return model.ArgAt(ci.Common(), i-1) } // an interface call's receiver is the value called
	fi.dup = fi.dup || f.HandlesDup
	for _, op := range f.Ops {
		op.ErrAbsent = absent
		fi.ops = append(fi.ops, &opAt{sent: sent{op: op, exists: exists, handle: arg(op.Param), row: arg(op.Row)}, instr: ci, via: via})
	}
}

func (r *reader) follow(op *opAt) *taint {
	if r.follows[op] == nil {
		r.follows[op] = follow(op.instr, op.sent)
	}
	return r.follows[op]
}

// summarize makes a function's FuncFact; one holding a promise sends nothing.
func (r *reader) summarize(fi *fnInfo) FuncFact {
	f := FuncFact{HandlesDup: fi.dup}
	if fi.covered {
		return f
	}
	sends := func(table string, kinds ...sqlfacts.Kind) bool { // a statement of one of kinds on table
		return slices.ContainsFunc(fi.ops, func(op *opAt) bool { return slices.Contains(kinds, op.op.Kind) && has(op.op.Tables, table) })
	}
	res := fi.fn.Signature.Results()
	f.Results = make([]uint8, res.Len())
	for _, op := range fi.ops {
		o := op.op
		o.Param, o.Row = slices.Index(fi.fn.Params, param(op.handle))+1, slices.Index(fi.fn.Params, param(op.row))+1
		switch t := r.follow(op); {
		case o.Kind == sqlfacts.Read && !sends(o.Table(), sqlfacts.Insert, sqlfacts.Update):
			returned := o.RowLock
			for i := range res.Len() {
				if t.results[i] {
					f.Results[i] |= resRead
					if t.errAbsent && !t.handlesAbsent() && types.Identical(res.At(i).Type(), errorType) {
						f.Results[i] |= resAbsent
					}
					if t.exists && types.Identical(res.At(i).Type().Underlying(), types.Typ[types.Bool]) {
						f.Results[i] |= resExists
					}
					returned = true
				}
			}
			for _, b := range fi.fn.Blocks {
				if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && len(ret.Results) > 0 && t.controlled(ret) {
					for i := range f.Results {
						f.Results[i] |= resRead
					}
					returned = true
				}
			}
			if o.ErrAbsent = false; returned {
				f.Ops = append(f.Ops, o)
			}
		case (o.Kind == sqlfacts.Insert || o.Kind == sqlfacts.Update || o.Kind == sqlfacts.Delete) && !sends(o.Table(), sqlfacts.Read):
			o.HandlesDup = o.HandlesDup || fi.dup
			o.Claims = o.Claims || (o.Kind == sqlfacts.Update && o.OldState || o.Kind == sqlfacts.Delete) && r.checked(op)
			f.Ops = append(f.Ops, o)
		case o.Kind == sqlfacts.Lock:
			f.Ops = append(f.Ops, o)
		}
	}
	if fi.serial {
		f.Ops = append(f.Ops, Op{Stmt: sqlfacts.Stmt{Kind: sqlfacts.Lock}})
	}
	seen := map[string]bool{} // a statement sent by several calls of a helper is one to a caller
	f.Ops = slices.DeleteFunc(f.Ops, func(o Op) bool { k := fmt.Sprintf("%#v", o); dup := seen[k]; seen[k] = true; return dup })
	return f
}

func param(v ssa.Value) *ssa.Parameter {
	p, _ := unwrap(v).(*ssa.Parameter)
	return p
}

func has(tables []string, t string) bool {
	return slices.ContainsFunc(tables, func(s string) bool { return sqlfacts.SameTable(s, t) })
}
