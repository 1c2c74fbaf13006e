package once005

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/ignore"
	"github.com/oncekit/once/analyzer/internal/sqlfacts"
	"github.com/oncekit/once/internal/directive"
)

// reader holds one package's analysis: its functions' statements and summaries.
type reader struct {
	pass       *analysis.Pass
	check      *analysis.Pass // the check's pass, which reports
	order      []*fnInfo
	rep        *ignore.Reporter
	schemas    []string
	own        PackageFact
	directives map[*ast.FuncDecl]*directive.Directive
	drivers    map[string]types.Type
	funcs      map[*ssa.Function]*fnInfo
	sites      map[*ssa.Function][]site
	escaped    map[*ssa.Function]bool
	follows    map[*opAt]*taint
	at         ssa.Instruction // the call being read
	models     map[*types.Named]bool
	lparens    map[token.Pos]*ast.CallExpr
	reported   map[token.Pos]bool
	schema     *sqlfacts.Schema
	schemaErr  error
	declared   []sqlfacts.Unique // by the package's table= directives
	all        []sqlfacts.Unique
}

// fnInfo is one function (or closure) of the package.
type fnInfo struct {
	fn      *ssa.Function
	ops     []*opAt
	covered bool // it holds a promise, or a runtime guard runs it
	serial  bool // it asks for a serializable transaction
	dup     bool // it handles a unique violation
	judged  bool // not a test, not generated
	fact    FuncFact
	state   uint8
}

// opAt is a statement a function sends, at one of its calls.
type opAt struct {
	sent
	instr   ssa.CallInstruction
	via     *types.Func // the helper that sends it; nil when sent here
	guarded bool        // in a closure a runtime guard runs
}

// site is a call of a function of the package.
type site struct {
	in   *fnInfo
	call ssa.CallInstruction
}

// build makes the package's SSA, reads each function's statements, summarises them as
// facts and judges them.
func (r *reader) build() {
	prog := ssa.NewProgram(r.pass.Fset, 0)
	for _, p := range r.pass.Pkg.Imports() {
		prog.CreatePackage(p, nil, nil, true)
	}
	pkg := prog.CreatePackage(r.pass.Pkg, r.pass.Files, r.pass.TypesInfo, false)
	pkg.Build()
	r.follows, r.models = map[*opAt]*taint{}, map[*types.Named]bool{}
	r.sites, r.escaped = map[*ssa.Function][]site{}, map[*ssa.Function]bool{}
	var all []*fnInfo
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		all = append(all, r.info(fn))
		for _, anon := range fn.AnonFuncs {
			add(anon)
		}
	}
	for _, f := range r.pass.Files {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				if obj, ok := r.pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					if fn := prog.FuncValue(obj); fn != nil && fn.Blocks != nil {
						add(fn)
					}
				}
			}
		}
	}
	for _, fi := range all {
		r.ensure(fi)
	}
	if os.Getenv("ONCE005_DEBUG") != "" {
		for _, fi := range all {
			for _, op := range fi.ops {
				fmt.Fprintf(os.Stderr, "%s: %s keys=%v cols=%v via=%v\n", fi.fn, describe(op.op), op.op.Keys, op.op.Columns, op.via)
			}
		}
	}
	r.order = all
	for _, fi := range all {
		if obj, ok := fi.fn.Object().(*types.Func); ok && (len(fi.fact.Ops) > 0 || fi.fact.HandlesDup) {
			r.pass.ExportObjectFact(obj, &fi.fact)
		}
	}
}

// info returns the record of a function, made the first time.
func (r *reader) info(fn *ssa.Function) *fnInfo {
	if fi := r.funcs[fn]; fi != nil {
		return fi
	}
	fi := &fnInfo{fn: fn}
	r.funcs[fn] = fi
	if fn.Parent() != nil {
		p := r.info(fn.Parent())
		fi.covered, fi.serial, fi.judged = p.covered, p.serial, p.judged
	}
	if fd, ok := fn.Syntax().(*ast.FuncDecl); ok {
		if d := r.directives[fd]; d != nil && d.Kind != directive.Request {
			fi.covered = true
		}
		file := r.pass.Fset.File(fd.Pos())
		fi.judged = !strings.HasSuffix(file.Name(), "_test.go") && !r.generated(file.Name())
	}
	if syn := fn.Syntax(); syn != nil {
		r.scanSyntax(fi, syn)
	}
	return fi
}

func (r *reader) generated(name string) bool {
	for _, f := range r.pass.Files {
		if r.pass.Fset.File(f.Pos()).Name() == name {
			return ast.IsGenerated(f)
		}
	}
	return false
}

// scanSyntax notes what a function's source names: a serializable isolation level, and
// a unique violation (SQLSTATE 23505 or its condition name, MySQL's and SQLite's
// texts, gorm's ErrDuplicatedKey, ent's IsConstraintError), which code that handles the
// insert's loser names.
func (r *reader) scanSyntax(fi *fnInfo, syn ast.Node) {
	ast.Inspect(syn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return n == syn
		case *ast.Ident:
			obj := r.pass.TypesInfo.Uses[n]
			if obj == nil || obj.Pkg() == nil {
				return true
			}
			switch path := obj.Pkg().Path(); {
			case obj.Name() == "LevelSerializable" && path == "database/sql",
				obj.Name() == "Serializable" && (path == "github.com/jackc/pgx/v5" || path == "github.com/jackc/pgx/v4"):
				fi.serial = true
			case obj.Name() == "ErrDuplicatedKey" && path == "gorm.io/gorm",
				obj.Name() == "IsConstraintError" && r.entGenerated(obj.Pkg()):
				fi.dup = true
			}
		}
		if e, ok := n.(ast.Expr); ok {
			if s, ok := r.constString(e); ok {
				fi.dup = fi.dup || s == "23505" || s == "unique_violation" || strings.Contains(s, "Duplicate entry") || strings.Contains(s, "UNIQUE constraint failed")
			}
		}
		return true
	})
}

// ensure reads the statements a function sends, directly and through the functions it
// calls, and summarises them for its callers.
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
			guard := runtimeGuard(c)
			r.at = ci
			if s, ok := r.read(c); ok {
				fi.ops = append(fi.ops, &opAt{sent: s, instr: ci})
				if s.model != nil && !r.models[s.model] {
					r.models[s.model] = true
					if st, ok := s.model.Underlying().(*types.Struct); ok {
						r.own.Uniques = append(r.own.Uniques, sqlfacts.TagUniques(s.op.Table(), st)...)
					}
				}
				continue
			}
			if callee := c.StaticCallee(); callee != nil && callee.Pkg != nil && callee.Pkg.Pkg == r.pass.Pkg {
				g := r.info(callee)
				r.ensure(g)
				r.helperOps(fi, ci, &g.fact, callee.Object())
			} else if fn := calleeOf(c); fn != nil && fn.Pkg() != nil && fn.Pkg() != r.pass.Pkg {
				var f FuncFact
				if r.pass.ImportObjectFact(fn, &f) {
					r.helperOps(fi, ci, &f, fn)
				}
			}
			for _, a := range c.Args {
				if mc, ok := a.(*ssa.MakeClosure); ok {
					g := r.info(mc.Fn.(*ssa.Function))
					g.covered = g.covered || guard
					r.ensure(g)
					if !g.covered {
						r.helperOps(fi, ci, &g.fact, nil)
					}
				}
			}
		}
	}
	fi.fact = r.summarize(fi)
	fi.state = 2
}

// operands notes the package's functions an instruction uses: called, or used as a
// value (then any caller may call them).
func (r *reader) operands(fi *fnInfo, instr ssa.Instruction) {
	var static ssa.Value
	if ci, ok := instr.(ssa.CallInstruction); ok && !ci.Common().IsInvoke() {
		static = ci.Common().Value
	}
	for _, op := range instr.Operands(nil) {
		fn, ok := (*op).(*ssa.Function)
		if !ok || fn.Pkg == nil || fn.Pkg.Pkg != r.pass.Pkg {
			continue
		}
		if fn == static {
			r.sites[fn] = append(r.sites[fn], site{fi, instr.(ssa.CallInstruction)})
		} else {
			r.escaped[fn] = true
		}
	}
}

// helperOps adds the statements a called function sends, as its fact says.
func (r *reader) helperOps(fi *fnInfo, ci ssa.CallInstruction, f *FuncFact, obj types.Object) {
	fi.dup = fi.dup || f.HandlesDup
	via, _ := obj.(*types.Func)
	var absent, exists bool
	for _, res := range f.Results {
		absent, exists = absent || res&resAbsent != 0, exists || res&resExists != 0
	}
	c := ci.Common()
	for _, op := range f.Ops {
		s := sent{op: op, exists: exists}
		s.op.ErrAbsent = absent
		if op.Param > 0 && op.Param <= len(c.Args) {
			s.handle = c.Args[op.Param-1]
		}
		if op.Row > 0 && op.Row <= len(c.Args) {
			s.row = c.Args[op.Row-1]
		}
		fi.ops = append(fi.ops, &opAt{sent: s, instr: ci, via: via})
	}
}

// runtimeGuard reports a call of a runtime guard that holds a promise (any kind but
// request): the closure it is given runs under it.
func runtimeGuard(c *ssa.CallCommon) bool {
	fn := calleeOf(c)
	if fn == nil {
		return false
	}
	_, t := typeKey(fn)
	if t == nil || t.Obj().Pkg().Path() != "github.com/oncekit/once/runtime" {
		return false
	}
	k := directive.Kind(strings.ToLower(strings.TrimSuffix(t.Obj().Name(), "Func")))
	return k.Rank() >= 0 && k != directive.Request
}

// follow returns the taint of what an op's call returns, computed once.
func (r *reader) follow(op *opAt) *taint {
	t := r.follows[op]
	if t == nil {
		t = follow(op.instr, op.sent)
		r.follows[op] = t
	}
	return t
}

// summarize says what a function's callers need to know of its SQL: the reads whose
// outcome it returns, the inserts, updates and locks it makes, each with the parameter
// it goes through. A table it both reads and writes is judged here and left out; a
// function holding a promise sends nothing its callers need to judge.
func (r *reader) summarize(fi *fnInfo) FuncFact {
	f := FuncFact{HandlesDup: fi.dup}
	if fi.covered {
		return f
	}
	var reads, writes []string
	for _, op := range fi.ops {
		switch op.op.Kind {
		case sqlfacts.Read:
			reads = append(reads, op.op.Tables...)
		case sqlfacts.Insert, sqlfacts.Update:
			writes = append(writes, op.op.Table())
		}
	}
	res := fi.fn.Signature.Results()
	f.Results = make([]uint8, res.Len())
	for _, op := range fi.ops {
		if op.guarded {
			continue
		}
		o := op.op
		o.Param, o.Row = slices.Index(fi.fn.Params, param(op.handle))+1, slices.Index(fi.fn.Params, param(op.row))+1
		switch o.Kind {
		case sqlfacts.Read:
			if has(writes, o.Table()) {
				continue
			}
			t := r.follow(op)
			var flags uint8
			for i := range res.Len() {
				v := uint8(0)
				if t.results[i] {
					v = resRead
					if t.errAbsent && !t.handlesAbsent() && types.Identical(res.At(i).Type(), errorType) {
						v |= resAbsent
					}
					if t.exists && types.Identical(res.At(i).Type().Underlying(), types.Typ[types.Bool]) {
						v |= resExists
					}
				}
				f.Results[i] |= v
				flags |= v
			}
			for _, b := range fi.fn.Blocks {
				if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && len(ret.Results) > 0 && t.controlled(ret) {
					for i := range f.Results {
						f.Results[i] |= resRead
					}
					flags |= resRead
				}
			}
			if flags != 0 || o.RowLock {
				o.ErrAbsent = false
				f.Ops = append(f.Ops, o)
			}
		case sqlfacts.Insert, sqlfacts.Update:
			if !has(reads, o.Table()) {
				o.HandlesDup = o.HandlesDup || fi.dup
				o.Claims = o.Claims || o.Kind == sqlfacts.Update && o.OldState && r.checked(op)
				f.Ops = append(f.Ops, o)
			}
		case sqlfacts.Lock:
			f.Ops = append(f.Ops, o)
		}
	}
	if fi.serial {
		f.Ops = append(f.Ops, Op{Stmt: sqlfacts.Stmt{Kind: sqlfacts.Lock}})
	}
	return f
}

// param returns the parameter a value is, or nil.
func param(v ssa.Value) *ssa.Parameter {
	p, _ := unwrap(v).(*ssa.Parameter)
	return p
}

func has(tables []string, t string) bool {
	return slices.ContainsFunc(tables, func(s string) bool { return sqlfacts.SameTable(s, t) })
}

// judge reports the function's inserts and updates that a read of the same table
// decides with nothing to serialise the two.
func (r *reader) judge(fi *fnInfo) {
	for _, ins := range fi.ops {
		if ins.guarded {
			continue
		}
		switch ins.op.Kind {
		case sqlfacts.Insert:
			r.judgeInsert(fi, ins)
		case sqlfacts.Update:
			r.judgeUpdate(fi, ins)
		}
	}
}

func (r *reader) judgeInsert(fi *fnInfo, ins *opAt) {
	table := ins.op.Table()
	counter := ins.op.Conflict == sqlfacts.Accumulate
	switch {
	case ins.op.FindOrCreate:
		if _, ok := sqlfacts.Covers(r.uniques(), table, ins.op.Keys); !ok && !r.locked(fi, ins, table, false) && !r.callersCover(fi, table, false, 0) {
			r.reportFindOrCreate(fi, ins)
		}
		return
	case ins.op.Conflict == sqlfacts.DoNothing, !counter && (fi.dup || ins.op.HandlesDup):
		return // the insert is its own check
	}
	accept := func(c class, _ *ssa.If) bool { return c == other || c == exists && !counter || c == limit && counter }
	for _, rd := range fi.ops {
		if rd == ins || rd.guarded || rd.op.Kind != sqlfacts.Read || !has(rd.op.Tables, table) || !sameRows(rd.op.Keys, ins.op.Columns) {
			continue
		}
		if r.follow(rd).decides(rd.instr.Block(), ins.instr.Block(), false, accept) == nil {
			if os.Getenv("ONCE005_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "not decided: %s by %s\n", describe(ins.op), describe(rd.op))
				t := r.follow(rd)
				for _, ifs := range t.ifs {
					c, f := t.classify(ifs.Cond)
					fmt.Fprintf(os.Stderr, "  if %s: class %d found %d\n", ifs.Cond, c, f)
				}
			}
			continue
		}
		if os.Getenv("ONCE005_DEBUG") != "" {
			d := r.follow(rd).decides(rd.instr.Block(), ins.instr.Block(), false, accept)
			fmt.Fprintf(os.Stderr, "at %s if %s\n", r.pass.Fset.Position(d.Pos()), d.Cond)
			fmt.Fprintf(os.Stderr, "decided: %s by %s locked=%v callers=%v keyed=%v natural=%v dup=%v\n", describe(ins.op), describe(rd.op), r.locked(fi, ins, table, false), r.callersCover(fi, table, false, 0), r.keyed(fi, ins, rd), r.natural(ins), fi.dup)
		}
		if r.locked(fi, ins, table, false) || r.callersCover(fi, table, false, 0) {
			return
		}
		if !counter && (r.keyed(fi, ins, rd) || r.natural(ins)) {
			return // the second insert fails on a unique constraint
		}
		r.reportInsert(fi, ins, rd, counter)
		return
	}
}

// keyed reports whether a unique constraint refuses the second of two racing inserts:
// one on the columns the read compares; one on columns whose values the inserted row
// takes from a read of the table (a name made from the last id plus one: racing calls
// read the same state and make the same key); or, where the read compares a column the
// row fills with the id of a row this call just inserted, the insert is of a row no
// other call can make.
func (r *reader) keyed(fi *fnInfo, ins, rd *opAt) bool {
	table := ins.op.Table()
	if _, ok := sqlfacts.Covers(r.uniques(), table, rd.op.Keys); ok {
		return true
	}
	for _, op := range fi.ops {
		if op == ins || op.guarded || !precedes(op.instr, ins.instr) {
			continue
		}
		cols := r.filled(ins, r.follow(op))
		switch {
		case len(cols) == 0:
		case op.op.Kind == sqlfacts.Read && has(op.op.Tables, table):
			if _, ok := sqlfacts.Covers(r.uniques(), table, cols); ok {
				return true
			}
		case op.op.Kind == sqlfacts.Insert && !has(op.op.Tables, table):
			if len(rd.op.Keys) == 0 || overlaps(rd.op.Keys, cols) {
				return true
			}
		}
	}
	return false
}

// natural reports whether the row an insert makes takes its primary key from the
// function's input: the key is not the database's (serial, identity, a default), and
// each of its columns gets a parameter, a constant, or a value computed from those
// (formatted, joined), never a call that makes a new one (a UUID, the clock, a random
// draw). A double submit or a retry then makes the same key, and the second insert
// fails on it, whatever columns the read compared. A row given by the caller keeps the
// caller's key unless the function sets it.
func (r *reader) natural(ins *opAt) bool {
	var pk sqlfacts.Unique
	for _, u := range r.uniques() {
		if u.Primary && sqlfacts.SameTable(u.Table, ins.op.Table()) {
			pk = u
		}
	}
	if len(pk.Columns) == 0 || pk.Generated {
		return false
	}
	for _, col := range pk.Columns {
		if i := slices.Index(ins.op.Columns, col); i >= 0 && i < len(ins.op.Args) && ins.op.Args[i] >= 0 && ins.op.Args[i] < len(ins.args) {
			if !natural(ins.args[ins.op.Args[i]], 0) {
				return false
			}
			continue
		}
		if ins.row == nil {
			return false
		}
		row := unwrap(ins.row)
		if _, ok := row.(*ssa.Alloc); !ok && param(row) == nil {
			return false
		}
		for _, ref := range *row.Referrers() {
			fa, ok := ref.(*ssa.FieldAddr)
			if !ok || fieldColumn(fa) != col {
				continue
			}
			for _, use := range *fa.Referrers() {
				if st, ok := use.(*ssa.Store); ok && st.Addr == fa && !natural(st.Val, 0) {
					return false
				}
			}
		}
	}
	return true
}

// pure are the packages whose functions give the same result for the same input.
var pure = map[string]bool{"strings": true, "strconv": true, "fmt": true, "path": true, "net/url": true}

// natural reports whether v comes from the function's input: a parameter, a constant,
// a field or a computation of those, a call of a pure function of those.
func natural(v ssa.Value, depth int) bool {
	if depth > 8 {
		return false
	}
	switch x := v.(type) {
	case *ssa.Parameter, *ssa.Const, *ssa.Global, *ssa.FreeVar, *ssa.Function, *ssa.Builtin:
		return true
	case *ssa.Call:
		fn := calleeOf(&x.Call)
		if fn == nil || fn.Pkg() == nil || !pure[fn.Pkg().Path()] {
			return false
		}
	case *ssa.Alloc: // what is stored into it, or into its elements and fields
		addrs := []ssa.Value{x}
		for _, ref := range *x.Referrers() {
			if a, ok := ref.(ssa.Value); ok && (isAddr(a)) {
				addrs = append(addrs, a)
			}
		}
		for _, a := range addrs {
			for _, ref := range *a.Referrers() {
				if st, ok := ref.(*ssa.Store); ok && st.Addr == a && !natural(st.Val, depth+1) {
					return false
				}
			}
		}
		return true
	}
	instr, ok := v.(ssa.Instruction)
	if !ok {
		return false
	}
	for _, op := range instr.Operands(nil) {
		if *op != nil && !natural(*op, depth+1) {
			return false
		}
	}
	return true
}

func isAddr(v ssa.Value) bool {
	switch v.(type) {
	case *ssa.IndexAddr, *ssa.FieldAddr:
		return true
	}
	return false
}

func fieldColumn(fa *ssa.FieldAddr) string {
	s := fa.X.Type().(*types.Pointer).Elem().Underlying().(*types.Struct)
	return sqlfacts.Column(s.Field(fa.Field).Name(), s.Tag(fa.Field))
}

// filled returns the columns of an insert's row whose values t covers: the fields of
// the struct an ORM inserts, or the columns whose placeholders stand for them.
func (r *reader) filled(ins *opAt, t *taint) []string {
	var cols []string
	for i, c := range ins.op.Columns {
		if i < len(ins.op.Args) && ins.op.Args[i] >= 0 && ins.op.Args[i] < len(ins.args) && t.vals[ins.args[ins.op.Args[i]]] {
			cols = append(cols, c)
		}
	}
	if ins.row == nil {
		return cols
	}
	row := unwrap(ins.row)
	if load, ok := row.(*ssa.UnOp); ok {
		row = load.X
	}
	if _, ok := row.(*ssa.Alloc); !ok {
		return cols
	}
	for _, ref := range *row.Referrers() {
		if fa, ok := ref.(*ssa.FieldAddr); ok {
			for _, use := range *fa.Referrers() {
				if st, ok := use.(*ssa.Store); ok && st.Addr == fa && t.vals[st.Val] {
					cols = append(cols, fieldColumn(fa))
				}
			}
		}
	}
	return cols
}

// judgeUpdate reports a claim two workers both win: an update setting a state, decided
// by a read of the row, that neither refuses a second run (a WHERE on the old state,
// whose outcome is checked) nor runs under a lock.
func (r *reader) judgeUpdate(fi *fnInfo, upd *opAt) {
	if !upd.op.SetsConst {
		return
	}
	table := upd.op.Table()
	for _, rd := range fi.ops {
		if rd.guarded || rd.op.Kind != sqlfacts.Read || !has(rd.op.Tables, table) || !sameRows(rd.op.Keys, upd.op.Keys) {
			continue
		}
		// A test of the state the update sets, or of whether the row in that state exists
		// (WHERE state = 'pending'); a test of another column (an owner, a flag) guards,
		// it does not claim.
		accept := func(c class, ifs *ssa.If) bool {
			return c == exists && overlaps(rd.op.Keys, upd.op.Columns) ||
				(c == other || c == limit) && overlaps(tested(ifs.Cond, rd.op.Selected, 0), upd.op.Columns)
		}
		if r.follow(rd).decides(rd.instr.Block(), upd.instr.Block(), true, accept) == nil {
			continue
		}
		if rd.op.RowLock || r.locked(fi, upd, table, true) || upd.op.OldState && (upd.op.Claims || r.checked(upd)) || r.callersCover(fi, table, true, 0) {
			return
		}
		r.reportClaim(fi, upd, rd)
		return
	}
}

// sameRows reports whether a read may look for the rows a write makes or changes: it
// compares a column the write names. A read by other columns only (the parent's id,
// before inserting a child with parent_id) looks for other rows. Where either side
// names no columns, it may.
func sameRows(keys, cols []string) bool {
	return len(keys) == 0 || len(cols) == 0 || overlaps(keys, cols)
}

// checked reports whether a branch tests what a statement changed (its rows affected,
// the row it returned), or the function returns it for its caller to test.
func (r *reader) checked(op *opAt) bool {
	t := r.follow(op)
	for _, ifs := range t.ifs {
		if c, _ := t.classify(ifs.Cond); c != none && c != neutral {
			return true
		}
	}
	res := op.instr.Parent().Signature.Results()
	for i := range t.results {
		if t.errAbsent || !types.Identical(res.At(i).Type(), errorType) {
			return true // returned: RETURNING's "no row", a count
		}
	}
	return false
}

// locked reports a lock taken in fi before op: an advisory or table lock, a row read
// FOR UPDATE (of another table, for an insert: a lock on the rows that exist does not
// stop a new one), or a hand-written latch (a statement a second run fails, whose
// outcome is checked). A serializable transaction locks all.
func (r *reader) locked(fi *fnInfo, op *opAt, table string, claim bool) bool {
	return fi.serial || r.lockedAt(fi, op.instr, table, claim, nil)
}

// lockedAt reports a lock taken in fi before the call at; with args, one taken
// through a handle the call is given (a lock holds in its transaction only).
func (r *reader) lockedAt(fi *fnInfo, at ssa.CallInstruction, table string, claim bool, args []ssa.Value) bool {
	for _, l := range fi.ops {
		if l.instr == at || l.guarded || !before(l.instr, at) {
			continue
		}
		o := l.op
		latch := (o.Try || o.Kind == sqlfacts.Update && o.OldState || o.Kind == sqlfacts.Insert && o.Conflict == sqlfacts.DoNothing || o.Kind == sqlfacts.Delete) && r.checked(l)
		lock := o.Kind == sqlfacts.Lock || o.Kind == sqlfacts.Read && o.RowLock && (claim || !has(o.Tables, table))
		through := args == nil || l.handle == nil || slices.ContainsFunc(args, func(a ssa.Value) bool { return unwrap(a) == unwrap(l.handle) })
		if latch || lock && through {
			if os.Getenv("ONCE005_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "  locked by %s latch=%v\n", describe(o), latch)
			}
			return true
		}
	}
	return false
}

// precedes reports whether a can run before b.
func precedes(a, b ssa.Instruction) bool {
	if a.Block() == b.Block() {
		return before(a, b)
	}
	return reach(a.Block(), b.Block())
}

// before reports whether a runs before b on every path to b.
func before(a, b ssa.Instruction) bool {
	if a.Block() != b.Block() {
		return a.Block().Dominates(b.Block())
	}
	for _, i := range a.Block().Instrs {
		if i == a {
			return true
		}
		if i == b {
			return false
		}
	}
	return false
}

// callersCover reports whether every call of an unexported function the package only
// calls (never uses as a value) runs under a promise or a lock its caller took, through
// the handle it passes, or under callers that are covered in turn (a few levels up).
func (r *reader) callersCover(fi *fnInfo, table string, claim bool, depth int) bool {
	if depth > 3 {
		return false
	}
	if p := fi.fn.Parent(); p != nil {
		return r.callersCover(r.info(p), table, claim, depth)
	}
	obj := fi.fn.Object()
	if obj == nil || obj.Exported() || r.escaped[fi.fn] {
		return false
	}
	n := 0
	for _, s := range r.sites[fi.fn] {
		if !s.in.judged || s.in == fi {
			continue
		}
		n++
		if !s.in.covered && !s.in.serial && !r.lockedAt(s.in, s.call, table, claim, s.call.Common().Args) && !r.callersCover(s.in, table, claim, depth+1) {
			return false
		}
	}
	return n > 0
}

// position returns where a call's source starts and ends.
func (r *reader) position(ci ssa.CallInstruction) (token.Pos, token.Pos) {
	if r.lparens == nil {
		r.lparens = map[token.Pos]*ast.CallExpr{}
		for _, f := range r.pass.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					r.lparens[c.Lparen] = c
				}
				return true
			})
		}
	}
	if c := r.lparens[ci.Common().Pos()]; c != nil {
		return c.Pos(), c.End()
	}
	return ci.Pos(), token.NoPos
}

// what names a statement for a message: "insert into runs", "insert into runs by
// store.Create".
func what(prefix string, op *opAt) string {
	s := prefix + " " + op.op.Table()
	if op.via != nil {
		s += " by " + funcName(op.via)
	}
	return s
}

func funcName(fn *types.Func) string {
	if recv := fn.Signature().Recv(); recv != nil {
		t := recv.Type()
		star := ""
		if p, ok := t.(*types.Pointer); ok {
			t, star = p.Elem(), "*"
		}
		if n := named(t); n != nil {
			return fmt.Sprintf("(%s%s.%s).%s", star, n.Obj().Pkg().Name(), n.Obj().Name(), fn.Name())
		}
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

// decider names the function a //once:transaction would go on.
func decider(fi *fnInfo) string {
	for fi.fn.Parent() != nil {
		fi = &fnInfo{fn: fi.fn.Parent()}
	}
	if fn, ok := fi.fn.Object().(*types.Func); ok {
		return funcName(fn)
	}
	return fi.fn.Name()
}

// columns names the columns a unique index would cover.
func columns(rd, ins *opAt) string {
	cols := rd.op.Keys
	if len(cols) == 0 {
		cols = ins.op.Columns
	}
	if len(cols) == 0 {
		return "the columns it looks up"
	}
	return "(" + strings.Join(cols, ", ") + ")"
}

// conflictHint says how each library makes an insert its own check.
var conflictHint = map[string]string{
	"":     "INSERT .. ON CONFLICT DO NOTHING, and read the winner's row when none comes back",
	"gorm": "Clauses(clause.OnConflict{DoNothing: true}), or handle gorm.ErrDuplicatedKey",
	"xorm": "handle the unique violation the insert returns",
	"bun":  `On("CONFLICT DO NOTHING")`,
	"ent":  "OnConflict(...).Ignore(), or handle ent.IsConstraintError",
}

func (r *reader) reportInsert(fi *fnInfo, ins, rd *opAt, counter bool) {
	pos, end := r.position(ins.instr)
	if r.reported[pos] {
		return // another statement of the same call: one finding per race
	}
	r.reported[pos] = true
	d := analysis.Diagnostic{Pos: pos, End: end}
	if counter {
		d.Message = fmt.Sprintf("%s adds to the row with no condition (DO UPDATE without WHERE), and %s decides it: two calls can both read room under the limit and both add; make the statement decide (DO UPDATE .. WHERE the new total is within the limit, RETURNING, no row back is the refusal) or declare //once:statement on %s",
			what("upsert into", ins), what("a read of", rd), decider(fi))
	} else {
		d.Message = fmt.Sprintf("%s is decided by %s with no lock, no conflict clause and no unique constraint on %s: two calls can both find no row and both insert; put a unique index on %s %s and make the insert the check (%s), or declare //once:transaction on %s",
			what("insert into", ins), what("a read of", rd), columns(rd, ins), ins.op.Table(), columns(rd, ins), conflictHint[ins.op.ORM], decider(fi))
	}
	rp, _ := r.position(rd.instr)
	d.Related = []analysis.RelatedInformation{{Pos: rp, Message: "the read that decides it"}}
	r.report(d)
}

func (r *reader) reportClaim(fi *fnInfo, upd, rd *opAt) {
	pos, end := r.position(upd.instr)
	if r.reported[pos] {
		return
	}
	r.reported[pos] = true
	rp, _ := r.position(rd.instr)
	r.report(analysis.Diagnostic{Pos: pos, End: end,
		Message: fmt.Sprintf("%s is decided by %s with no row lock, and the update claims nothing (no WHERE on the old state whose rows affected are checked): two workers can both read the old state and both go on; add the old state to its WHERE (AND state = 'pending') and go on only when it changed a row (RowsAffected, or RETURNING), or read the row FOR UPDATE, or declare //once:transaction on %s",
			what("update of", upd), what("a read of", rd), decider(fi)),
		Related: []analysis.RelatedInformation{{Pos: rp, Message: "the read that decides it"}},
	})
}

func (r *reader) reportFindOrCreate(fi *fnInfo, ins *opAt) {
	pos, end := r.position(ins.instr)
	cols := "(" + strings.Join(ins.op.Keys, ", ") + ")"
	if len(ins.op.Keys) == 0 {
		cols = "its looked-up columns"
	}
	r.report(analysis.Diagnostic{Pos: pos, End: end,
		Message: fmt.Sprintf("FirstOrCreate on %s reads then inserts with no lock, no ON CONFLICT and no unique constraint on the columns it looks up: two calls can both find nothing and both insert; put a unique index on %s %s (in a migration, or a uniqueIndex tag) and handle gorm.ErrDuplicatedKey, or declare //once:transaction on %s",
			ins.op.Table(), ins.op.Table(), cols, decider(fi)),
	})
}
