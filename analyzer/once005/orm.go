package once005

import (
	"go/types"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// orm reads the statement a builder chain sends, at the call ending it.
func (r *reader) orm(lib *orm, t *types.Named, key string, recv ssa.Value, args []ssa.Value) (sent, bool) {
	e := lib.ends[key]
	links, handle := chain(recv, func(u *types.Named) bool { return u.Obj().Pkg() == t.Obj().Pkg() })
	args = spread(args)
	s := sent{op: Op{Stmt: sqlfacts.Stmt{Kind: e.kind}, ORM: lib.name}, handle: handle}
	s.op.ErrAbsent, s.exists, s.op.Exists = e.flags&fAbsent != 0, e.flags&fExists != 0, e.flags&fExists != 0 && e.arg < 0
	s.op.Count, s.op.Sum = e.flags&fCount != 0, e.flags&fSum != 0
	var text []ssa.Value
	if e.flags&fText != 0 {
		text = args
	}
	for _, l := range links {
		if linkRoles[l.name] == roleRaw {
			text = spread(l.args)
		}
	}
	if e.flags&fBuilt != 0 { // the chain is the statement: squirrel's QueryRow, sqlf's ExecAndClose(ctx, db)
		b, ok := r.built(links, handle)
		if e.arg >= 0 && e.arg < len(args) {
			b.dests = args[e.arg:]
		}
		if e.handle >= 0 && e.handle < len(args) {
			b.handle = args[e.handle]
		}
		t, sends := b.sent(e, lib.name)
		return t, ok && sends
	}
	for i, a := range text {
		if b, ok := r.sqlText(a); ok { // the SQL: what comes after it are its arguments, before it what it fills
			if _, isConst := str(a); !isConst && r.info(r.at.Parent()).judged { // not a test's, not generated
				r.own.Uniques = append(r.own.Uniques, sqlfacts.ParseDDL(b.q)...) // DDL made at run time (collect reads constants)
			}
			if b.args == nil {
				b.args = text[i+1:]
			}
			if b.dests, b.handle = text[:i], handle; e.arg >= 0 && e.arg < len(args) && e.flags&fText == 0 {
				b.dests = args[e.arg:]
			}
			return b.sent(e, "")
		}
	}
	if e.flags&fText != 0 || len(text) > 0 {
		return s, false
	}
	if e.arg >= 0 && e.arg < len(args) {
		switch {
		case e.kind == sqlfacts.Read:
			s.dests = args[e.arg : e.arg+1]
		case e.kind == sqlfacts.Insert:
			s.row, s.dests = args[e.arg], args[e.arg:e.arg+1]
		case e.kind == sqlfacts.Delete:
		case e.flags&fSetCol != 0:
			if c, ok := str(args[0]); ok && len(args) > 1 {
				s.op.Columns, s.op.SetsConst = []string{strings.ToLower(c)}, isConst(args[1])
			}
		default: // Updates(&row)
			s.op.Columns, s.op.SetsConst = r.fieldsSet(args[e.arg])
		}
		r.useModel(&s, args[e.arg], lib.plural) // a model names the table; a column's name (setcol) is none
	}
	if e.conds >= 0 && e.conds < len(args) {
		if r.where(&s, args[e.conds:]); len(s.op.Keys) == 0 && e.flags&fByID != 0 {
			s.op.Keys = []string{"id"} // First(&u, id)
		}
	}
	for _, l := range links {
		r.link(&s, lib, l)
	}
	if s.model == nil && e.conds >= 0 && e.conds < len(args) && len(s.op.Tables) == 0 {
		r.useModel(&s, args[e.conds], lib.plural) // Exist(&User{Email: e})
	}
	if suffix, _, ok := strings.Cut(key, "."); ok && lib.generated != "" { // UserUpsertOne writes users
		s.op.Tables = []string{sqlfacts.BuilderTable(t.Obj().Name(), suffix)}
		if strings.HasPrefix(suffix, "Upsert") {
			s.op.Conflict = sqlfacts.DoNothing
		}
	}
	if e.kind == sqlfacts.Update {
		s.op.OldState = overlaps(s.op.Keys, s.op.Columns)
	}
	return s, len(s.op.Tables) > 0
}

// The roles a builder's shaping method or a clause plays, as the catalogue names them.
const (
	roleModel    = "model"
	roleTable    = "table"
	roleWhere    = "where"
	roleID       = "id"
	roleLock     = "lock"
	roleLockText = "lock-text"
	roleOption   = "option"
	roleIgnore   = "ignore"
	roleOnText   = "on-text"
	roleClauses  = "clauses"
	roleRaw      = "raw"
)

// roles are the roles the reader knows; the catalogue's test checks it names no other.
var roles = []string{roleModel, roleTable, roleWhere, roleID, roleLock, roleLockText, roleOption, roleIgnore, roleOnText, roleClauses, roleRaw}

// link reads a chain's call: the libraries' shaping methods share names and meanings.
func (r *reader) link(s *sent, lib *orm, l link) {
	first, isStr := "", false
	if len(l.args) > 0 {
		first, isStr = str(l.args[0])
	}
	low := strings.ToLower(strings.TrimSpace(first))
	switch role := linkRoles[l.name]; {
	case role == roleModel || role == roleTable && !isStr:
		s.model = nil
		r.useModel(s, l.args[0], lib.plural)
		if s.op.Kind == sqlfacts.Insert && s.row == nil {
			s.row, s.dests = l.args[0], l.args[:1]
		}
	case role == roleTable:
		s.op.Tables, s.model = []string{strings.Fields(low + " ")[0]}, nil
	case role == roleWhere && lib.generated == "": // ent's predicates are functions
		r.where(s, spread(l.args))
	case role == roleID:
		s.op.Keys = union(s.op.Keys, []string{"id"})
	case role == roleLock || role == roleLockText && (strings.HasPrefix(low, "update") || strings.HasPrefix(low, "share") || strings.HasPrefix(low, "no key")),
		role == roleOption && first == "gorm:query_option" && len(l.args) > 1 && rowLock(l.args[1]):
		s.op.RowLock = true
	case role == roleIgnore || role == roleOnText && strings.HasPrefix(low, "conflict"):
		s.op.Conflict = sqlfacts.DoNothing
	case role == roleClauses:
		for _, c := range spread(l.args) {
			if t := named(unwrap(c).Type()); t != nil {
				switch clauseRoles[t.Obj().Pkg().Path()+"."+t.Obj().Name()] {
				case roleLock:
					s.op.RowLock = true
				case roleIgnore:
					s.op.Conflict = sqlfacts.DoNothing
				}
			}
		}
	}
}

func rowLock(v ssa.Value) bool {
	q, _ := str(v)
	return strings.Contains(strings.ToLower(q), "for update")
}

// table names a model's table: by TableName, bun's table: tag, or the ORM's rule.
func (r *reader) table(m *types.Named, plural bool) string {
	obj := m.Obj()
	var f PackageFact
	if obj.Pkg() == r.pass.Pkg {
		f = r.own
	} else {
		r.pass.ImportPackageFact(obj.Pkg(), &f)
	}
	if t := f.Tables[obj.Name()]; t != "" {
		return t
	}
	s := m.Underlying().(*types.Struct) // modelOf gives structs only
	for i := range s.NumFields() {
		for _, it := range strings.Split(reflect.StructTag(s.Tag(i)).Get("bun"), ",") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(it), "table:"); ok && t != "" {
				return strings.ToLower(t)
			}
		}
	}
	return sqlfacts.TableOf(obj.Name(), plural)
}

// useModel sets a statement's table and model from a model argument.
func (r *reader) useModel(s *sent, v ssa.Value, plural bool) {
	if m := modelOf(v); m != nil && s.model == nil {
		s.model = m
		s.op.Tables = []string{r.table(m, plural)}
	}
}

// where adds the columns a condition compares: SQL text, a struct or map literal.
func (r *reader) where(s *sent, args []ssa.Value) {
	if len(args) > 0 {
		q, isText := str(args[0])
		cols, _ := r.fieldsSet(args[0])
		if isText {
			cols = sqlfacts.WhereKeys(q)
		}
		s.op.Keys = union(s.op.Keys, cols)
	}
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

func overlaps(a, b []string) bool {
	return slices.ContainsFunc(a, func(x string) bool { return slices.Contains(b, x) })
}

// isConst reports a non-zero constant among vs: a state set, not a reset.
func isConst(vs ...ssa.Value) bool {
	return slices.ContainsFunc(vs, func(v ssa.Value) bool {
		c, ok := unwrap(v).(*ssa.Const)
		return ok && c.Value != nil && c.Value.ExactString() != `""` && c.Value.ExactString() != "0" && c.Value.ExactString() != "false"
	})
}
