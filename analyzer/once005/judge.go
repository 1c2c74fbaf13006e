package once005

import (
	"fmt"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/model"
	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// judge reports the writes a read of the same table decides with nothing serialising them.
func (r *reader) judge(fi *fnInfo) {
	for _, w := range fi.ops {
		switch table := w.op.Table(); {
		case w.op.Kind == sqlfacts.Update && w.op.SetsConst:
			r.judgeClaim(fi, w, table, nil)
		case w.op.Kind == sqlfacts.Update:
			if cols := r.worksOut(fi, w); len(cols) > 0 {
				r.judgeClaim(fi, w, table, cols)
			}
		case w.op.Kind == sqlfacts.Insert && w.op.Conflict != sqlfacts.DoNothing:
			r.judgeInsert(fi, w, table)
		case w.op.Kind == sqlfacts.Delete:
			r.judgeConsume(fi, w, table)
		}
	}
}

// judgeInsert reports an insert an existence test decides, or an adding upsert a cap does.
func (r *reader) judgeInsert(fi *fnInfo, ins *opAt, table string) {
	counter := ins.op.Conflict == sqlfacts.Accumulate
	if !counter && (fi.dup || ins.op.HandlesDup) {
		return // a unique index stands behind the insert, and its loser is handled
	}
	rd := r.decider(fi, ins, table, ins.op.Columns, false, func(c class, _ *ssa.If, _ *opAt) bool {
		return c == other || c == exists && !counter || c == limit && counter
	})
	switch {
	case rd == nil || r.lockedAt(fi, ins.instr, table, false, nil) || r.callersCover(fi, table, false, 0):
	case counter:
		r.report(ins, rd, "%s adds to the row with no condition (DO UPDATE without WHERE), and %s decides it: two calls can both read room under the limit and both add; make the statement decide (DO UPDATE .. WHERE the new total is within the limit, RETURNING, no row back is the refusal) or declare //once:statement on %s",
			what("upsert into", ins), what("a read of", rd), funcName(fi.fn))
	case !r.keyed(fi, ins, rd) && !r.natural(ins):
		cols, index, hint, keys := "the columns it looks up", table+"'s looked-up columns", "", rd.op.Keys
		if len(keys) == 0 {
			keys = ins.op.Columns
		}
		if len(keys) > 0 {
			cols = "(" + strings.Join(keys, ", ") + ")"
			index = table + " " + cols
		}
		if i := slices.IndexFunc(libraries, func(lib *orm) bool { return lib.name == ins.op.ORM }); i >= 0 {
			hint = libraries[i].hint
		}
		r.report(ins, rd, "%s is decided by %s with no lock, no conflict clause and no unique constraint on %s: two calls can both find no row and both insert; put a unique index on %s and make the insert the check (%s), or declare //once:transaction on %s",
			what("insert into", ins), what("a read of", rd), cols, index, hint, funcName(fi.fn))
	}
}

// judgeClaim reports a claim two workers both win: an update setting a state a read
// of the row tested (or looked for in the old state), unlocked, not refusing a second
// run; or writing back an amount worked out from one the read tested (worked, its
// columns). A test of another column (an owner) guards, it does not claim.
func (r *reader) judgeClaim(fi *fnInfo, upd *opAt, table string, worked []string) {
	rd := r.decider(fi, upd, table, upd.op.Keys, true, func(c class, ifs *ssa.If, rd *opAt) bool {
		return c == exists && worked == nil && overlaps(rd.op.Keys, upd.op.Columns) ||
			(c == other || c == limit) && overlaps(tested(ifs.Cond, rd.op.Selected, 0), append(worked, upd.op.Columns...))
	})
	old := upd.op.OldState || worked != nil && overlaps(upd.op.Keys, upd.op.Columns) // compare-and-set: WHERE balance = $3, version = $3
	switch {
	case rd == nil || rd.op.RowLock || r.lockedAt(fi, upd.instr, table, true, nil) || old && (upd.op.Claims || r.checked(upd)) ||
		r.callersCover(fi, table, true, 0):
	case worked != nil:
		r.report(upd, rd, "%s writes back an amount worked out from %s, which tests it, with no row lock: two calls can both read the old amount and both pass the test, and one write overwrites the other; let the statement do both (SET n = n - $1 WHERE n >= $1) and go on only when it changed a row, or read the row FOR UPDATE, or declare //once:transaction on %s",
			what("update of", upd), what("a read of", rd), funcName(fi.fn))
	default:
		r.report(upd, rd, "%s is decided by %s with no row lock, and the update claims nothing (no WHERE on the old state whose rows affected are checked): two workers can both read the old state and both go on; add the old state to its WHERE (AND state = 'pending') and go on only when it changed a row (RowsAffected, or RETURNING), or read the row FOR UPDATE, or declare //once:transaction on %s",
			what("update of", upd), what("a read of", rd), funcName(fi.fn))
	}
}

// judgeConsume reports a row consumed twice: a read decides a delete of the row it found
// (a one-time token, an invitation, an expired session), nothing checks that the delete
// removed it, and an insert goes with it. Two calls can both find the row and both insert.
func (r *reader) judgeConsume(fi *fnInfo, del *opAt, table string) {
	next := slices.IndexFunc(fi.ops, func(w *opAt) bool {
		return w.op.Kind == sqlfacts.Insert && w.op.Conflict == sqlfacts.NoClause && !w.op.HandlesDup && !sqlfacts.SameTable(w.op.Table(), table) &&
			(precedes(del.instr, w.instr) || precedes(w.instr, del.instr))
	})
	if next < 0 || del.op.Claims || r.checked(del) {
		return
	}
	rd := r.decider(fi, del, table, del.op.Keys, true, func(c class, _ *ssa.If, _ *opAt) bool { return c == exists || c == other })
	if rd != nil && !rd.op.RowLock && !r.lockedAt(fi, del.instr, table, true, nil) && !r.callersCover(fi, table, true, 0) {
		r.report(del, rd, "%s is decided by %s with no row lock, and nothing checks that it removed the row %s goes with: two calls can both find the row and both go on; go on only when the delete removed a row (RowsAffected, or DELETE .. RETURNING), or read the row FOR UPDATE, or declare //once:transaction on %s",
			what("delete from", del), what("a read of", rd), what("the insert into", fi.ops[next]), funcName(fi.fn))
	}
}

// worksOut returns the columns an update writes with an amount worked out from a read of
// its table (a balance less a price): the read-modify-write of a debit or a quota.
func (r *reader) worksOut(fi *fnInfo, upd *opAt) (cols []string) {
	for _, rd := range fi.ops {
		if rd.op.Kind == sqlfacts.Read && has(rd.op.Tables, upd.op.Table()) && precedes(rd.instr, upd.instr) {
			for _, a := range spread(upd.instr.Common().Args) {
				cols = append(cols, r.follow(rd).computed(a, upd.op.Columns)...)
			}
		}
	}
	return cols
}

// computed returns the columns v writes worked out from what was read: set, for a sum or
// difference; the columns of a row's fields last set to one.
func (t *taint) computed(v ssa.Value, set []string) (cols []string) {
	x, field := unwrap(v), -1
	if u, ok := x.(*ssa.UnOp); ok && u.Op == token.MUL {
		x = u.X
		if fa, ok := x.(*ssa.FieldAddr); ok {
			x, field = fa.X, fa.Field
		}
	}
	if t.worked(x) {
		return set
	}
	for _, ref := range model.Refs(x) {
		if g, ok := ref.(*ssa.FieldAddr); ok && (field < 0 || g.Field == field) && slices.ContainsFunc(model.Refs(g), func(st ssa.Instruction) bool {
			s, ok := st.(*ssa.Store)
			return ok && s.Addr == g && t.worked(unwrap(s.Val))
		}) {
			cols = append(cols, fieldColumn(g))
		}
	}
	return cols
}

// worked reports a number added to or taken from what was read.
func (t *taint) worked(v ssa.Value) bool {
	x, ok := v.(*ssa.BinOp)
	return ok && (x.Op == token.ADD || x.Op == token.SUB) && t.vals[x] && numeric(v.Type())
}

// decider returns the first read of table, by the columns cols, that decides w.
func (r *reader) decider(fi *fnInfo, w *opAt, table string, cols []string, claim bool, accept func(class, *ssa.If, *opAt) bool) *opAt {
	for _, rd := range fi.ops {
		if rd.op.Kind == sqlfacts.Read && has(rd.op.Tables, table) && sameRows(rd.op.Keys, cols) &&
			r.follow(rd).decides(rd.instr.Block(), w.instr.Block(), claim, func(c class, ifs *ssa.If) bool { return accept(c, ifs, rd) }) != nil {
			return rd
		}
	}
	return nil
}

// sameRows reports whether a read compares a column a write names, or either names none.
func sameRows(keys, cols []string) bool {
	return len(keys) == 0 || len(cols) == 0 || overlaps(keys, cols)
}

// keyed reports whether a unique constraint refuses the second of two racing inserts:
// on the columns the read compares, or on columns the row fills from a read of the
// table (a name made from the last id); or the read compares a column holding the id
// of a row this call just inserted.
func (r *reader) keyed(fi *fnInfo, ins, rd *opAt) bool {
	table := ins.op.Table()
	_, ok := sqlfacts.Covers(r.uniques(), table, rd.op.Keys)
	for _, op := range fi.ops {
		if op != ins && !ok && precedes(op.instr, ins.instr) {
			cols := r.filled(ins, func(v ssa.Value) bool { return r.follow(op).vals[v] })
			_, covered := sqlfacts.Covers(r.uniques(), table, cols)
			ok = len(cols) > 0 && (op.op.Kind == sqlfacts.Read && has(op.op.Tables, table) && covered ||
				op.op.Kind == sqlfacts.Insert && !has(op.op.Tables, table) && sameRows(rd.op.Keys, cols))
		}
	}
	return ok
}

// natural reports a primary key (not the database's) taken from the input, never a new
// value: a double submit makes the same key.
func (r *reader) natural(ins *opAt) bool {
	var pk sqlfacts.Unique
	for _, u := range r.uniques() {
		if u.Primary && sqlfacts.SameTable(u.Table, ins.op.Table()) {
			pk = u
		}
	}
	row := unwrap(ins.row)
	if _, ok := row.(*ssa.Alloc); !ok && param(row) == nil {
		row = nil // a row the caller gives keeps the caller's key unless set here
	}
	for _, col := range pk.Columns {
		if a := argOf(ins, col); a != nil && !natural(a, 0) || a == nil && (row == nil || len(r.filled(ins, func(v ssa.Value) bool { return !natural(v, 0) })) > 0) {
			return false
		}
	}
	return len(pk.Columns) > 0 && !pk.Generated
}

func argOf(ins *opAt, col string) ssa.Value {
	if i := slices.Index(ins.op.Columns, col); i >= 0 && i < len(ins.op.Args) && ins.op.Args[i] >= 0 && ins.op.Args[i] < len(ins.args) {
		return ins.args[ins.op.Args[i]]
	}
	return nil
}

// natural reports whether v is computed from parameters and constants only.
func natural(v ssa.Value, depth int) bool {
	switch x := v.(type) {
	case *ssa.Parameter, *ssa.Const, *ssa.Global, *ssa.FreeVar, *ssa.Function, *ssa.Builtin:
		return true
	case *ssa.Call:
		if fn := calleeOf(&x.Call); fn == nil || fn.Pkg() == nil || !pure[fn.Pkg().Path()] {
			return false
		}
	case *ssa.Alloc: // what is stored into it, its elements and its fields
		for _, ref := range append([]ssa.Instruction{x}, model.Refs(x)...) {
			switch ref.(type) {
			case *ssa.Alloc, *ssa.FieldAddr, *ssa.IndexAddr: // x, or an address in it
				a := ref.(ssa.Value)
				for _, use := range model.Refs(a) {
					if st, ok := use.(*ssa.Store); ok && st.Addr == a && (depth > 8 || !natural(st.Val, depth+1)) {
						return false
					}
				}
			}
		}
		return true
	}
	instr, ok := v.(ssa.Instruction)
	if !ok || depth > 8 {
		return false
	}
	for _, op := range instr.Operands(nil) {
		if *op != nil && !natural(*op, depth+1) {
			return false
		}
	}
	return true
}

// filled returns the columns of an insert's row given a value in accepts.
func (r *reader) filled(ins *opAt, in func(ssa.Value) bool) []string {
	var cols []string
	for _, c := range ins.op.Columns {
		if a := argOf(ins, c); a != nil && in(a) {
			cols = append(cols, c)
		}
	}
	row := unwrap(ins.row)
	if load, ok := row.(*ssa.UnOp); ok {
		row = load.X
	}
	uses := model.Refs(row) // and, where it holds a pointer to the row (Create(&u) of a *User u), its loads' uses
	for _, ref := range model.Refs(row) {
		if load, ok := ref.(*ssa.UnOp); ok && load.Op == token.MUL {
			uses = append(uses, model.Refs(load)...)
		}
	}
	for _, ref := range uses {
		if fa, ok := ref.(*ssa.FieldAddr); ok {
			for _, use := range model.Refs(fa) {
				if st, ok := use.(*ssa.Store); ok && st.Addr == fa && in(st.Val) {
					cols = append(cols, fieldColumn(fa))
				}
			}
		}
	}
	return cols
}

// checked reports a branch testing what a statement changed, or its being returned.
func (r *reader) checked(op *opAt) bool {
	t := r.follow(op)
	if slices.ContainsFunc(t.ifs, func(ifs *ssa.If) bool { c, _ := t.classify(ifs.Cond); return c != none && c != neutral }) {
		return true
	}
	for i := range t.results {
		if t.errAbsent || !types.Identical(op.instr.Parent().Signature.Results().At(i).Type(), errorType) {
			return true // RETURNING's "no row", a count
		}
	}
	return false
}

// lockedAt reports a lock taken in fi before the call at: a lock, a row of another
// table (or for a claim, any) read FOR UPDATE, a latch (a statement a second run
// fails, its outcome tested). With args, through a handle the call is given.
func (r *reader) lockedAt(fi *fnInfo, at ssa.CallInstruction, table string, claim bool, args []ssa.Value) bool {
	return slices.ContainsFunc(fi.ops, func(l *opAt) bool {
		if o := l.op; l.instr != at && before(l.instr, at) { // a latch's outcome is followed only for a statement before
			lock := o.Kind == sqlfacts.Lock || o.Kind == sqlfacts.Read && o.RowLock && (claim || !has(o.Tables, table))
			return lock && (args == nil || l.handle == nil || slices.ContainsFunc(args, func(a ssa.Value) bool { return unwrap(a) == unwrap(l.handle) })) ||
				(o.Kind == sqlfacts.Update && o.OldState || o.Kind == sqlfacts.Insert && o.Conflict == sqlfacts.DoNothing || o.Kind == sqlfacts.Delete) && r.checked(l)
		}
		return false
	})
}

// precedes reports whether a can run before b; before, whether it does on every path.
func precedes(a, b ssa.Instruction) bool {
	return a.Block() == b.Block() && before(a, b) || a.Block() != b.Block() && reach(a.Block(), b.Block())
}

func before(a, b ssa.Instruction) bool {
	if a.Block() != b.Block() {
		return a.Block().Dominates(b.Block())
	}
	return slices.Index(a.Block().Instrs, a) < slices.Index(a.Block().Instrs, b)
}

// callersCover reports an unexported function the package only calls under a promise
// or a lock its caller took, or covered callers.
func (r *reader) callersCover(fi *fnInfo, table string, claim bool, depth int) bool {
	if p := fi.fn.Parent(); p != nil {
		return r.callersCover(r.info(p), table, claim, depth)
	}
	if obj := fi.fn.Object(); obj == nil || obj.Exported() || r.escaped[fi.fn] || depth > 3 {
		return false
	}
	n := 0
	for _, s := range r.sites[fi.fn] {
		if s.in.judged && s.in != fi {
			n++
			if !s.in.covered && !s.in.serial && !r.lockedAt(s.in, s.call, table, claim, s.call.Common().Args) && !r.callersCover(s.in, table, claim, depth+1) {
				return false
			}
		}
	}
	return n > 0
}

// report reports a finding at the write, once per call.
func (r *reader) report(w, rd *opAt, format string, args ...any) {
	if !r.reported[w.instr.Pos()] {
		r.reported[w.instr.Pos()] = true
		r.rep.Report(analysis.Diagnostic{Pos: w.instr.Pos(), Message: fmt.Sprintf(format, args...),
			Related: []analysis.RelatedInformation{{Pos: rd.instr.Pos(), Message: "the read that decides it"}}})
	}
}

// what names a statement: "insert into runs", "insert into runs by store.Create".
func what(prefix string, op *opAt) string {
	if op.via != nil {
		return prefix + " " + op.op.Table() + " by " + funcName(op.via)
	}
	return prefix + " " + op.op.Table()
}

// funcName names a function, or a closure's, as its package's users write it.
func funcName(fn any) string {
	if f, ok := fn.(*ssa.Function); ok {
		for f.Parent() != nil {
			f = f.Parent()
		}
		if fn, ok = f.Object().(*types.Func); !ok {
			return f.Name()
		}
	}
	return pathRE.ReplaceAllString(fn.(*types.Func).FullName(), "") // (*store.Store).Find
}

var pathRE = regexp.MustCompile(`[\w.~-]+/`)

func fieldColumn(fa *ssa.FieldAddr) string {
	s := fa.X.Type().(*types.Pointer).Elem().Underlying().(*types.Struct)
	return sqlfacts.Column(s.Field(fa.Field).Name(), s.Tag(fa.Field))
}
