package once005

import (
	"go/types"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// end says what a call that ends a builder chain sends.
type end struct {
	kind  sqlfacts.Kind
	flags uint8
	arg   int // the argument a read fills, an insert inserts or an update sets from; -1 none
	conds int // the first inline condition; -1 none
}

// What an end does besides its kind.
const (
	fAbsent uint8 = 1 << iota // its error says "no row"
	fExists                   // it, or its bool, says whether a row exists
	fCount                    // it counts rows
	fSum                      // it adds values up
	fBoth                     // it reads and then inserts (FirstOrCreate)
	fText                     // it sends the SQL text of its argument, or of its chain's Raw
	fSetCol                   // Update(column, value)
)

// An orm is one library's query builders, known by the package that declares them and
// the receiver types of their chains. Its ends are keyed by method, or by "Type.Method"
// where the builder types differ in meaning.
type orm struct {
	name   string
	plural bool // the default table name is plural
	ends   map[string]end
}

var (
	read        = func(flags uint8, arg, conds int) end { return end{sqlfacts.Read, flags, arg, conds} }
	insertEnd   = end{sqlfacts.Insert, 0, 0, -1}
	updateEnd   = end{sqlfacts.Update, 0, 0, -1}
	textEnd     = end{sqlfacts.Other, fText, 0, -1}
	gormLibrary = orm{"gorm", true, map[string]end{
		"First": read(fAbsent, 0, 1), "Take": read(fAbsent, 0, 1), "Last": read(fAbsent, 0, 1), "Find": read(0, 0, 1),
		"FirstOrInit": read(0, 0, 1), "Scan": read(0, 0, -1), "Pluck": read(0, 1, -1), "Count": read(fCount, 0, -1),
		"Row": read(0, -1, -1), "Rows": read(0, -1, -1), "Create": insertEnd, "CreateInBatches": insertEnd,
		"FirstOrCreate": {sqlfacts.Insert, fBoth, 0, 1}, "Update": {sqlfacts.Update, fSetCol, 0, -1},
		"UpdateColumn": {sqlfacts.Update, fSetCol, 0, -1}, "Updates": updateEnd, "UpdateColumns": updateEnd, "Exec": textEnd,
	}}
	xormLibrary = orm{"xorm", false, map[string]end{
		"Get": read(fExists, 0, 0), "Exist": read(fExists, -1, 0), "Find": read(0, 0, 1), "FindAndCount": read(0, 0, 1),
		"Iterate": read(0, -1, 0), "Count": read(fCount, -1, 0), "Sum": read(fSum, -1, 0), "SumInt": read(fSum, -1, 0),
		"Sums": read(fSum, -1, 0), "SumsInt": read(fSum, -1, 0), "Insert": insertEnd, "InsertOne": insertEnd,
		"InsertMulti": insertEnd, "Update": updateEnd, "Exec": textEnd, "Query": textEnd, "QueryString": textEnd,
		"QueryInterface": textEnd,
	}}
	bunLibrary = orm{"bun", true, map[string]end{
		"SelectQuery.Scan": read(fAbsent, 1, -1), "SelectQuery.Exists": read(fExists, -1, -1),
		"SelectQuery.Count": read(fCount, -1, -1), "SelectQuery.ScanAndCount": read(0, 1, -1),
		"InsertQuery.Exec": {sqlfacts.Insert, 0, -1, -1}, "InsertQuery.Scan": {sqlfacts.Insert, 0, -1, -1},
		"UpdateQuery.Exec": {sqlfacts.Update, 0, -1, -1}, "RawQuery.Scan": read(fAbsent, 1, -1),
		"RawQuery.Exec": read(0, -1, -1),
	}}
	// entLibrary's ends are keyed by the suffix ent's generator gives a builder type
	// (UserQuery, UserCreate, UserUpsertOne, UserUpdateOne) and the method.
	entLibrary = orm{"ent", true, map[string]end{
		"Query.Exist": read(fExists, -1, -1), "Query.Only": read(fAbsent, -1, -1), "Query.First": read(fAbsent, -1, -1),
		"Query.OnlyID": read(fAbsent, -1, -1), "Query.FirstID": read(fAbsent, -1, -1), "Query.All": read(0, -1, -1),
		"Query.IDs": read(0, -1, -1), "Query.Count": read(fCount, -1, -1), "Create.Save": insertEnd, "Create.Exec": insertEnd,
		"CreateBulk.Save": insertEnd, "CreateBulk.Exec": insertEnd, "UpsertOne.Exec": insertEnd, "UpsertBulk.Exec": insertEnd,
		"UpdateOne.Save": updateEnd, "UpdateOne.Exec": updateEnd, "Update.Save": updateEnd, "Update.Exec": updateEnd,
	}}
)

// xormPaths are xorm's import paths, its own and its forks'.
var xormPaths = map[string]bool{"xorm.io/xorm": true, "github.com/go-xorm/xorm": true, "github.com/xorm-io/xorm": true}

// library returns the ORM a builder type belongs to, and the key of its method's end.
func (r *reader) library(t *types.Named, method string) (*orm, string) {
	switch path, name := t.Obj().Pkg().Path(), t.Obj().Name(); {
	case path == "gorm.io/gorm" && name == "DB":
		return &gormLibrary, method
	case xormPaths[path] && (name == "Engine" || name == "Session" || name == "EngineGroup"):
		return &xormLibrary, method
	case path == "github.com/uptrace/bun":
		return &bunLibrary, name + "." + method
	case r.entGenerated(t.Obj().Pkg()):
		for _, suffix := range []string{"Query", "CreateBulk", "Create", "UpsertOne", "UpsertBulk", "UpdateOne", "Update"} {
			if strings.HasSuffix(name, suffix) && name != suffix {
				return &entLibrary, suffix + "." + strings.TrimSuffix(method, "X")
			}
		}
	}
	return nil, ""
}

// orm reads the statement a chain of builder calls sends, at the call that ends it:
// its table (the model's, or one named), the columns its conditions compare, a row
// lock, a conflict clause, the columns an update sets.
func (r *reader) orm(lib *orm, t *types.Named, e end, recv ssa.Value, args []ssa.Value) (sent, bool) {
	same := func(u *types.Named) bool { l, _ := r.library(u, ""); return l == lib && u.Obj().Pkg() == t.Obj().Pkg() }
	links := chain(recv, same)
	args = spread(args)
	s := sent{op: Op{Stmt: sqlfacts.Stmt{Kind: e.kind}, ORM: lib.name}, handle: root(recv, same)}
	s.op.ErrAbsent, s.exists, s.op.Exists = e.flags&fAbsent != 0, e.flags&fExists != 0, e.flags&fExists != 0 && e.arg < 0
	s.op.Count, s.op.Sum, s.op.FindOrCreate = e.flags&fCount != 0, e.flags&fSum != 0, e.flags&fBoth != 0
	text := args
	if e.flags&fText == 0 {
		text = nil
	}
	for _, l := range links {
		if l.name == "Raw" || l.name == "SQL" || l.name == "NewRaw" {
			text = spread(l.args)
		}
	}
	if len(text) > 0 {
		q, ok := str(text[0])
		if !ok {
			return s, false
		}
		t := r.text(q, s.handle, e.flags&fAbsent != 0)
		t.args, t.exists = text[1:], t.exists || s.exists
		if e.arg >= 0 && e.arg < len(args) && e.flags&fText == 0 {
			t.dests = args[e.arg:]
		}
		return t, t.op.Kind != sqlfacts.Other
	}
	if e.arg >= 0 && e.arg < len(args) {
		switch {
		case e.kind == sqlfacts.Read:
			s.dests = args[e.arg : e.arg+1]
			r.useModel(&s, args[e.arg], lib.plural)
		case e.kind == sqlfacts.Insert:
			s.row, s.dests = args[e.arg], args[e.arg:e.arg+1]
			r.useModel(&s, args[e.arg], lib.plural)
		case e.flags&fSetCol != 0:
			if c, ok := str(args[0]); ok && len(args) > 1 {
				s.op.Columns, s.op.SetsConst = []string{strings.ToLower(c)}, isConst(args[1:2])
			}
		default:
			s.op.Columns, s.op.SetsConst = r.fieldsSet(args[e.arg])
		}
	}
	if e.conds >= 0 && e.conds < len(args) {
		if _, ok := str(args[e.conds]); ok {
			r.where(&s, args[e.conds:])
		}
		for _, a := range args[e.conds:] {
			if _, ok := str(a); !ok {
				cols, _ := r.fieldsSet(a)
				if len(cols) == 0 && lib.name == "gorm" && e.conds > 0 {
					cols = []string{"id"} // First(&u, id)
				}
				s.op.Keys = union(s.op.Keys, cols)
			}
			break
		}
	}
	for _, l := range links {
		r.link(&s, lib, l)
	}
	if s.model == nil && e.conds >= 0 && e.conds < len(args) && len(s.op.Tables) == 0 {
		r.useModel(&s, args[e.conds], lib.plural) // Exist(&User{Email: e})
	}
	if lib.name == "ent" {
		s.op.Tables = []string{sqlfacts.TableOf(entEntity(t.Obj().Name()), true)}
		s.op.Conflict = map[bool]sqlfacts.Conflict{true: sqlfacts.DoNothing}[strings.Contains(t.Obj().Name(), "Upsert")]
	}
	if e.kind == sqlfacts.Update {
		s.op.OldState = overlaps(s.op.Keys, s.op.Columns)
	}
	return s, len(s.op.Tables) > 0
}

// link reads one call of a chain: the libraries give their shaping methods the same
// names and meanings.
func (r *reader) link(s *sent, lib *orm, l link) {
	arg := func(i int) (string, bool) {
		if i < len(l.args) {
			return str(l.args[i])
		}
		return "", false
	}
	first, isStr := arg(0)
	low := strings.ToLower(strings.TrimSpace(first))
	switch {
	case l.name == "Model" || l.name == "Table" && !isStr:
		s.model = nil
		r.useModel(s, l.args[0], lib.plural)
		if s.op.Kind == sqlfacts.Insert && s.row == nil {
			s.row, s.dests = l.args[0], l.args[:1]
		}
	case l.name == "Table" || l.name == "TableExpr":
		s.op.Tables, s.model = []string{strings.Fields(low + " ")[0]}, nil
	case l.name == "Where" || l.name == "And" || l.name == "Or":
		if lib.name == "ent" {
			for _, p := range spread(l.args) {
				s.op.Keys = union(s.op.Keys, r.predicate(p))
			}
		} else {
			r.where(s, spread(l.args))
		}
	case l.name == "ID" || l.name == "UpdateOneID":
		s.op.Keys = union(s.op.Keys, []string{"id"})
	case l.name == "In" && isStr:
		s.op.Keys = union(s.op.Keys, []string{low})
	case l.name == "ForUpdate" || l.name == "ForShare" || l.name == "For" && (strings.HasPrefix(low, "update") || strings.HasPrefix(low, "share") || strings.HasPrefix(low, "no key")):
		s.op.RowLock = true
	case l.name == "Set" && strings.HasPrefix(first, "gorm:"):
		v, _ := arg(1)
		s.op.RowLock = s.op.RowLock || strings.Contains(strings.ToLower(v), "for update")
	case l.name == "Ignore" || l.name == "On" && strings.HasPrefix(low, "conflict"):
		s.op.Conflict = sqlfacts.DoNothing
	case l.name == "Clauses":
		for _, c := range spread(l.args) {
			if t := named(unwrap(c).Type()); t != nil && t.Obj().Pkg().Path() == "gorm.io/gorm/clause" {
				s.op.RowLock = s.op.RowLock || t.Obj().Name() == "Locking"
				if t.Obj().Name() == "OnConflict" || t.Obj().Name() == "Insert" {
					s.op.Conflict = sqlfacts.DoNothing
				}
			}
		}
	case s.op.Kind != sqlfacts.Update:
	case l.name == "Cols" || l.name == "MustCols":
		for _, c := range spread(l.args) {
			if c, ok := str(c); ok {
				s.op.Columns = union(s.op.Columns, []string{strings.ToLower(c)})
			}
		}
	case l.name == "Set" && isStr: // bun: Set("state = ?", v)
		col, val, _ := strings.Cut(low, "=")
		s.op.Columns = union(s.op.Columns, []string{strings.TrimSpace(col)})
		s.op.SetsConst = s.op.SetsConst || strings.Contains(val, "'") || isConst(spread(l.args[1:]))
	case lib.name == "ent" && strings.HasPrefix(l.name, "Set") && len(l.args) == 1: // SetState("running")
		s.op.Columns = union(s.op.Columns, []string{sqlfacts.Snake(strings.TrimPrefix(l.name, "Set"))})
		s.op.SetsConst = s.op.SetsConst || isConst(l.args)
	}
}

// entEntity returns the entity an ent builder type is for: User for UserQuery.
func entEntity(typ string) string {
	for _, suffix := range []string{"Query", "CreateBulk", "Create", "UpsertOne", "UpsertBulk", "UpdateOne", "Update"} {
		if e, ok := strings.CutSuffix(typ, suffix); ok {
			return e
		}
	}
	return typ
}

// table names the table of a model: its TableName method's (read from the model's
// package), bun's table: tag, or the ORM's default name for the type.
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
	if s, ok := m.Underlying().(*types.Struct); ok {
		for i := range s.NumFields() {
			for _, it := range strings.Split(reflect.StructTag(s.Tag(i)).Get("bun"), ",") {
				if t, ok := strings.CutPrefix(strings.TrimSpace(it), "table:"); ok && t != "" {
					return strings.ToLower(t)
				}
			}
		}
	}
	return sqlfacts.TableOf(obj.Name(), plural)
}

// useModel sets a statement's table from its model, and notes the model, whose tags
// may declare unique columns.
func (r *reader) useModel(s *sent, v ssa.Value, plural bool) {
	if m := modelOf(v); m != nil && s.model == nil {
		s.model = m
		s.op.Tables = []string{r.table(m, plural)}
	}
}

// where adds the columns a condition compares: SQL text ("email = ?"), a struct or a
// map literal.
func (r *reader) where(s *sent, args []ssa.Value) {
	if len(args) == 0 {
		return
	}
	if q, ok := str(args[0]); ok {
		s.op.Keys = union(s.op.Keys, sqlfacts.WhereKeys(q))
		return
	}
	cols, _ := r.fieldsSet(args[0])
	s.op.Keys = union(s.op.Keys, cols)
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

// isConst reports a constant other than a zero value among vs: a state set, not a
// field reset.
func isConst(vs []ssa.Value) bool {
	return slices.ContainsFunc(vs, func(v ssa.Value) bool {
		c, ok := unwrap(v).(*ssa.Const)
		return ok && c.Value != nil && c.Value.ExactString() != `""` && c.Value.ExactString() != "0" && c.Value.ExactString() != "false"
	})
}

// entGenerated reports a package ent generated: it imports entgo.io/ent. Its builders'
// types and methods are named by ent's generator (UserQuery, UserCreate, SetEmail),
// which is what the check reads them by.
func (r *reader) entGenerated(p *types.Package) bool {
	return p != r.pass.Pkg && slices.ContainsFunc(p.Imports(), func(i *types.Package) bool { return i.Path() == "entgo.io/ent" })
}

// predicate returns the columns an ent predicate value compares: a call of a function
// whose PredicateFact says, or of one combining others (And, Or, Not).
func (r *reader) predicate(v ssa.Value) []string {
	c, ok := unwrap(v).(*ssa.Call)
	fn := (*types.Func)(nil)
	if ok {
		fn = calleeOf(&c.Call)
	}
	if fn == nil {
		return nil
	}
	var f PredicateFact
	if r.pass.ImportObjectFact(fn, &f) {
		return f.Columns
	}
	var cols []string
	for _, a := range spread(c.Call.Args) {
		cols = union(cols, r.predicate(a))
	}
	return cols
}
