package once005

import (
	"go/types"
	"reflect"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// xormPaths are xorm's import paths, its own and its forks'.
var xormPaths = map[string]bool{"xorm.io/xorm": true, "github.com/go-xorm/xorm": true, "github.com/xorm-io/xorm": true}

// table names the table of a model: its TableName method's (read from the model's
// package), bun's table: tag, or the ORM's default name for the type.
func (r *reader) table(m *types.Named, plural bool) string {
	obj := m.Obj()
	if obj.Pkg() == r.pass.Pkg {
		if t := r.own.Tables[obj.Name()]; t != "" {
			return t
		}
	} else {
		var f PackageFact
		if r.pass.ImportPackageFact(obj.Pkg(), &f) && f.Tables[obj.Name()] != "" {
			return f.Tables[obj.Name()]
		}
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

// gorm reads a *gorm.DB chain: First, Take, Last, Find, Count, Scan and Pluck read;
// Create inserts; FirstOrCreate does both; Update and Updates update; Exec and Raw
// send SQL text.
func (r *reader) gorm(method string, recv ssa.Value, args []ssa.Value) (sent, bool) {
	same := func(t *types.Named) bool { return t.Obj().Pkg().Path() == "gorm.io/gorm" && t.Obj().Name() == "DB" }
	links := chain(recv, same)
	s := sent{op: Op{ORM: "gorm"}, handle: root(recv, same)}
	for _, l := range links {
		if l.name == "Raw" && len(l.args) > 0 {
			if q, ok := str(l.args[0]); ok {
				t := r.text(q, s.handle, false)
				t.dests = args
				return t, t.op.Kind != sqlfacts.Other
			}
		}
	}
	switch method {
	case "Exec":
		if q, ok := str(args[0]); ok {
			t := r.text(q, s.handle, false)
			t.args = spread(args[1:])
			return t, true
		}
		return s, false
	case "First", "Take", "Last", "Find", "Scan", "Pluck", "Count", "FirstOrInit":
		s.op.Kind, s.op.ErrAbsent, s.op.Count = sqlfacts.Read, method == "First" || method == "Take" || method == "Last", method == "Count"
		s.dests = args[len(args)-1:]
		if method == "First" || method == "Take" || method == "Last" || method == "Find" || method == "FirstOrInit" {
			s.dests = args[:1]
			if conds := elems(args[1]); len(conds) > 0 {
				if _, ok := str(conds[0]); ok {
					r.where(&s, conds)
				} else if cols, _ := r.fieldsSet(conds[0]); len(cols) > 0 {
					s.op.Keys = cols
				} else {
					s.op.Keys = []string{"id"}
				}
			}
		}
	case "Create", "CreateInBatches", "FirstOrCreate":
		s.op.Kind, s.op.FindOrCreate = sqlfacts.Insert, method == "FirstOrCreate"
		s.row, s.dests = args[0], args[:1]
		if s.op.FindOrCreate {
			if conds := elems(args[1]); len(conds) > 0 {
				r.where(&s, conds)
			}
		}
	case "Update", "UpdateColumn":
		s.op.Kind = sqlfacts.Update
		if c, ok := str(args[0]); ok {
			s.op.Columns = []string{strings.ToLower(c)}
			_, s.op.SetsConst = unwrap(args[1]).(*ssa.Const)
		}
	case "Updates", "UpdateColumns":
		s.op.Kind = sqlfacts.Update
		s.op.Columns, s.op.SetsConst = r.fieldsSet(args[0])
	default:
		return s, false
	}
	if s.op.Kind != sqlfacts.Update && len(args) > 0 {
		r.useModel(&s, args[0], true)
	}
	for _, l := range links {
		switch l.name {
		case "Model":
			s.model = nil
			r.useModel(&s, l.args[0], true)
		case "Where":
			r.where(&s, spread(l.args))
		case "Clauses":
			for _, c := range spread(l.args) {
				if t := named(unwrap(c).Type()); t != nil && t.Obj().Pkg().Path() == "gorm.io/gorm/clause" {
					switch t.Obj().Name() {
					case "Locking":
						s.op.RowLock = true
					case "OnConflict", "Insert":
						s.op.Conflict = sqlfacts.DoNothing
					}
				}
			}
		case "Set":
			k, _ := str(l.args[0])
			v, _ := str(l.args[1])
			s.op.RowLock = s.op.RowLock || k == "gorm:query_option" && strings.Contains(strings.ToLower(v), "for update")
		}
	}
	for _, l := range links {
		if l.name == "Table" {
			if t, ok := str(l.args[0]); ok {
				s.op.Tables, s.model = []string{strings.ToLower(strings.Fields(t + " ")[0])}, nil
			}
		}
	}
	if s.op.Kind == sqlfacts.Update {
		s.op.OldState = overlaps(s.op.Keys, s.op.Columns)
	}
	return s, len(s.op.Tables) > 0
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// xorm reads an Engine or Session chain: Get, Exist, Find, Count and the sums read;
// Insert inserts; Update updates; Exec, Query and SQL send SQL text. A bean's set fields
// are conditions; xorm names a table in singular snake case.
func (r *reader) xorm(method string, recv ssa.Value, args []ssa.Value) (sent, bool) {
	same := func(t *types.Named) bool { return xormPaths[t.Obj().Pkg().Path()] }
	links := chain(recv, same)
	s := sent{op: Op{ORM: "xorm"}, handle: root(recv, same)}
	beans := spread(args)
	switch method {
	case "Exec", "Query", "QueryString", "QueryInterface":
		if len(beans) > 0 {
			if q, ok := str(beans[0]); ok {
				return r.text(q, s.handle, false), true
			}
		}
		return s, false
	case "Get", "Exist", "Find", "Count", "Iterate", "FindAndCount", "Sum", "SumInt", "Sums", "SumsInt":
		s.op.Kind, s.exists = sqlfacts.Read, method == "Get" || method == "Exist"
		s.op.Exists, s.op.Count, s.op.Sum = method == "Exist", method == "Count", strings.HasPrefix(method, "Sum")
		s.dests = args[:1]
		conds := beans
		if method == "Find" || method == "FindAndCount" {
			conds = beans[1:]
		}
		for _, b := range conds {
			cols, _ := r.fieldsSet(b)
			s.op.Keys = union(s.op.Keys, cols)
		}
	case "Insert", "InsertOne", "InsertMulti":
		s.op.Kind = sqlfacts.Insert
		if len(beans) > 0 {
			s.row, s.dests = beans[0], beans[:1]
		}
	case "Update":
		s.op.Kind = sqlfacts.Update
		if len(beans) > 0 {
			s.op.Columns, s.op.SetsConst = r.fieldsSet(beans[0])
		}
	default:
		return s, false
	}
	for _, l := range links {
		if l.name == "SQL" && len(l.args) > 0 {
			if q, ok := str(l.args[0]); ok && s.op.Kind == sqlfacts.Read {
				t := r.text(q, s.handle, false)
				t.dests, t.exists = s.dests, s.exists
				return t, true
			}
		}
	}
	if len(beans) > 0 {
		if _, isStr := str(beans[0]); !isStr {
			r.useModel(&s, beans[0], false)
		}
	}
	for _, l := range links {
		switch l.name {
		case "Where", "And", "Or":
			r.where(&s, spread(l.args))
		case "ID":
			s.op.Keys = union(s.op.Keys, []string{"id"})
		case "In":
			if c, ok := str(l.args[0]); ok {
				s.op.Keys = union(s.op.Keys, []string{strings.ToLower(c)})
			}
		case "ForUpdate":
			s.op.RowLock = true
		case "Cols", "MustCols":
			for _, c := range spread(l.args) {
				if c, ok := str(c); ok && s.op.Kind == sqlfacts.Update {
					s.op.Columns = union(s.op.Columns, []string{strings.ToLower(c)})
				}
			}
		case "Table":
			if t, ok := str(l.args[0]); ok {
				s.op.Tables, s.model = []string{strings.ToLower(t)}, nil
			} else {
				s.model = nil
				r.useModel(&s, l.args[0], false)
			}
		}
	}
	if s.op.Kind == sqlfacts.Update {
		s.op.OldState = overlaps(s.op.Keys, s.op.Columns)
	}
	return s, len(s.op.Tables) > 0
}

// bun reads bun's queries: a SelectQuery ending in Scan, Exists or Count reads; an
// InsertQuery ending in Exec or Scan inserts (On("CONFLICT ...") and Ignore() are its
// conflict clause); an UpdateQuery updates; a RawQuery sends NewRaw's SQL text.
func (r *reader) bun(typ, method string, recv ssa.Value, args []ssa.Value) (sent, bool) {
	same := func(t *types.Named) bool {
		return t.Obj().Pkg().Path() == "github.com/uptrace/bun" && t.Obj().Name() == typ
	}
	links := chain(recv, same)
	s := sent{op: Op{ORM: "bun"}, handle: root(recv, same)}
	switch {
	case typ == "SelectQuery" && (method == "Scan" || method == "Exists" || method == "Count" || method == "ScanAndCount"):
		s.op.Kind, s.op.ErrAbsent, s.op.Exists, s.op.Count = sqlfacts.Read, method == "Scan", method == "Exists", method == "Count"
		s.exists = s.op.Exists
		if len(args) > 1 {
			s.dests = spread(args[1:])
		}
	case typ == "InsertQuery" && (method == "Exec" || method == "Scan"):
		s.op.Kind = sqlfacts.Insert
	case typ == "UpdateQuery" && (method == "Exec" || method == "Scan"):
		s.op.Kind = sqlfacts.Update
	case typ == "RawQuery" && (method == "Exec" || method == "Scan"):
		// NewRaw is a method of the DB, the call before the chain.
		if c, ok := root(recv, same).(*ssa.Call); ok {
			if _, a := argsOf(&c.Call); len(a) > 0 {
				if q, ok := str(a[0]); ok {
					t := r.text(q, nil, method == "Scan")
					t.dests = args[1:]
					return t, true
				}
			}
		}
		return s, false
	default:
		return s, false
	}
	for _, l := range links {
		switch l.name {
		case "Model":
			r.useModel(&s, l.args[0], true)
			if s.op.Kind == sqlfacts.Insert {
				s.row, s.dests = l.args[0], l.args[:1]
			}
		case "Where":
			r.where(&s, l.args)
		case "For":
			q, _ := str(l.args[0])
			s.op.RowLock = s.op.RowLock || strings.HasPrefix(strings.ToLower(q), "update") || strings.HasPrefix(strings.ToLower(q), "share") || strings.HasPrefix(strings.ToLower(q), "no key")
		case "On":
			if q, ok := str(l.args[0]); ok && strings.HasPrefix(strings.ToLower(strings.TrimSpace(q)), "conflict") {
				s.op.Conflict = sqlfacts.DoNothing
			}
		case "Ignore":
			s.op.Conflict = sqlfacts.DoNothing
		case "Set":
			if q, ok := str(l.args[0]); ok {
				col, val, _ := strings.Cut(q, "=")
				s.op.Columns = union(s.op.Columns, []string{strings.ToLower(strings.TrimSpace(col))})
				s.op.SetsConst = s.op.SetsConst || strings.Contains(val, "'") || len(l.args) > 1 && isConst(spread(l.args[1:]))
			}
		}
	}
	for _, l := range links {
		if l.name == "Table" {
			for _, a := range spread(l.args) {
				if t, ok := str(a); ok {
					s.op.Tables, s.model = []string{strings.ToLower(t)}, nil
				}
			}
		}
	}
	if s.op.Kind == sqlfacts.Update {
		s.op.OldState = overlaps(s.op.Keys, s.op.Columns)
	}
	return s, len(s.op.Tables) > 0
}

func isConst(vs []ssa.Value) bool {
	for _, v := range vs {
		if _, ok := unwrap(v).(*ssa.Const); ok {
			return true
		}
	}
	return false
}

// entGenerated reports a package ent generated: it imports entgo.io/ent. Its builders'
// types and methods are named by ent's generator (UserQuery, UserCreate, SetEmail),
// which is what the check reads them by.
func (r *reader) entGenerated(p *types.Package) bool {
	if p == r.pass.Pkg {
		return false // the generated client calling itself
	}
	for _, imp := range p.Imports() {
		if imp.Path() == "entgo.io/ent" {
			return true
		}
	}
	return false
}

// ent reads an ent client's builders: a <T>Query ending in Exist, Only, First, All,
// Count or IDs reads; a <T>Create (or its upsert, after OnConflict) ending in Save or
// Exec inserts; a <T>Update or <T>UpdateOne ending in Save or Exec updates. Predicates
// name the columns compared, through their facts.
func (r *reader) ent(typ, method string, recv ssa.Value, args []ssa.Value) (sent, bool) {
	same := func(t *types.Named) bool { return t.Obj().Name() == typ }
	links := chain(recv, same)
	s := sent{op: Op{ORM: "ent"}}
	method = strings.TrimSuffix(method, "X")
	var entity string
	for _, suffix := range []string{"Query", "CreateBulk", "Create", "UpsertOne", "UpsertBulk", "UpdateOne", "Update"} {
		if e, ok := strings.CutSuffix(typ, suffix); ok && e != "" {
			entity = e
			switch {
			case suffix == "Query" && slices.Contains([]string{"Exist", "Only", "First", "All", "Count", "IDs", "OnlyID", "FirstID"}, method):
				s.op.Kind, s.op.Exists, s.op.Count = sqlfacts.Read, method == "Exist", method == "Count"
				s.op.ErrAbsent, s.exists = method == "Only" || method == "First" || method == "OnlyID" || method == "FirstID", s.op.Exists
			case strings.HasPrefix(suffix, "Create") && (method == "Save" || method == "Exec"):
				s.op.Kind = sqlfacts.Insert
			case strings.HasPrefix(suffix, "Upsert") && method == "Exec":
				s.op.Kind, s.op.Conflict = sqlfacts.Insert, sqlfacts.DoNothing
			case strings.HasPrefix(suffix, "Update") && (method == "Save" || method == "Exec"):
				s.op.Kind = sqlfacts.Update
			}
			break
		}
	}
	if s.op.Kind == sqlfacts.Other {
		return s, false
	}
	s.op.Tables = []string{sqlfacts.TableOf(entity, true)}
	for _, l := range links {
		switch {
		case l.name == "Where":
			for _, p := range spread(l.args) {
				s.op.Keys = union(s.op.Keys, r.predicate(p))
			}
		case l.name == "ForUpdate" || l.name == "ForShare":
			s.op.RowLock = true
		case strings.HasPrefix(l.name, "Set") && s.op.Kind == sqlfacts.Update && len(l.args) == 1:
			s.op.Columns = union(s.op.Columns, []string{sqlfacts.Snake(strings.TrimPrefix(l.name, "Set"))})
			s.op.SetsConst = s.op.SetsConst || isConst(l.args)
		}
	}
	if s.op.Kind == sqlfacts.Update {
		s.op.OldState = overlaps(s.op.Keys, s.op.Columns)
	}
	return s, true
}

// predicate returns the columns an ent predicate value compares: a call of a function
// whose PredicateFact says, or of one combining others (And, Or, Not).
func (r *reader) predicate(v ssa.Value) []string {
	c, ok := unwrap(v).(*ssa.Call)
	if !ok {
		return nil
	}
	fn := calleeOf(&c.Call)
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
