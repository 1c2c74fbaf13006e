package once005

import (
	"go/ast"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// ModelsFact describes the ORM models a package declares: the table a model's TableName
// method names, and the unique columns its struct tags declare (gorm's uniqueIndex and
// unique, bun's unique, xorm's unique, and primary keys). A statement built in another
// package from one of these models reads it from here.
type ModelsFact struct {
	Models []Model
}

// AFact marks ModelsFact as a fact.
func (*ModelsFact) AFact() {}

func (f *ModelsFact) String() string {
	var names []string
	for _, m := range f.Models {
		names = append(names, m.Type)
	}
	return "models(" + strings.Join(names, ",") + ")"
}

// Model is one struct type used as an ORM model.
type Model struct {
	// Type is the type's name in its package.
	Type string
	// Table is what its TableName method returns; empty without one.
	Table string
	// Uniques are the column sets its tags declare unique.
	Uniques []TagUnique
}

// TagUnique is one unique column set declared by struct tags.
type TagUnique struct {
	Columns []string
	Primary bool
	// Fields are a primary key's fields, in the order of Columns.
	Fields []KeyField
}

// KeyField is one field of a primary key.
type KeyField struct {
	// Name is the field's name in the struct.
	Name string
	// Generated: the database makes its value (an autoincrement, serial or identity
	// column, a default), or the key is the ID field no tag names, taken to be one.
	Generated bool
	// Int: an integer field, which the ORMs let the database number when it is zero.
	Int bool
}

// models reads the models the package declares.
func models(pass *analysis.Pass) []Model {
	tableNames := map[string]string{}
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Name.Name != "TableName" || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Body == nil || len(fd.Body.List) != 1 {
				continue
			}
			ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				continue
			}
			tv, ok := pass.TypesInfo.Types[ret.Results[0]]
			if !ok || tv.Value == nil {
				continue
			}
			recv := pass.TypesInfo.TypeOf(fd.Recv.List[0].Type)
			if p, ok := recv.(*types.Pointer); ok {
				recv = p.Elem()
			}
			if n, ok := recv.(*types.Named); ok {
				tableNames[n.Obj().Name()] = strings.ToLower(strings.Trim(tv.Value.ExactString(), "\"`"))
			}
		}
	}
	var out []Model
	scope := pass.Pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		m := Model{Type: name, Table: tableNames[name], Uniques: tagUniques(st)}
		if m.Table != "" || len(m.Uniques) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// tagUniques reads the unique column sets a model's struct tags declare. Fields of one
// named group (gorm's uniqueIndex:name, bun's unique:name, xorm's unique(name)) make one
// composite set, in field order.
func tagUniques(st *types.Struct) []TagUnique {
	var out []TagUnique
	groups := map[string]int{} // group → index in out
	var key KeyField           // the field being read, for a primary key
	add := func(group, col string, primary bool) {
		var fields []KeyField
		if primary {
			fields = []KeyField{key}
		}
		if group == "" {
			out = append(out, TagUnique{Columns: []string{col}, Primary: primary, Fields: fields})
			return
		}
		if i, ok := groups[group]; ok {
			out[i].Columns = append(out[i].Columns, col)
			out[i].Fields = append(out[i].Fields, fields...)
			return
		}
		groups[group] = len(out)
		out = append(out, TagUnique{Columns: []string{col}, Primary: primary, Fields: fields})
	}
	tagged := false
	var idField, idName string
	for i := range st.NumFields() {
		f := st.Field(i)
		tag := st.Tag(i)
		col := columnOf(f.Name(), tag)
		key = KeyField{Name: f.Name(), Generated: generated(tag), Int: intType(f.Type())}
		if f.Name() == "ID" || f.Name() == "Id" {
			idField, idName = col, f.Name()
		}
		if g := sqltext.Tag(tag, "gorm"); g != "" {
			tagged = true
			for _, item := range strings.Split(g, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(item), ":")
				switch strings.ToLower(k) {
				case "uniqueindex":
					name, _, _ := strings.Cut(v, ",")
					add("gorm:"+name, col, false)
				case "unique":
					add("", col, false)
				case "primarykey", "primary_key":
					add("pk", col, true)
				}
			}
		}
		if b := sqltext.Tag(tag, "bun"); b != "" {
			tagged = true
			parts := strings.Split(b, ",")
			for _, p := range parts[1:] {
				k, v, _ := strings.Cut(strings.TrimSpace(p), ":")
				switch k {
				case "unique":
					if v == "" {
						add("", col, false)
					} else {
						add("bun:"+v, col, false)
					}
				case "pk":
					add("pk", col, true)
				}
			}
		}
		if x := sqltext.Tag(tag, "xorm"); x != "" {
			tagged = true
			for _, w := range strings.Fields(x) {
				lw := strings.ToLower(w)
				switch {
				case lw == "unique":
					add("", col, false)
				case strings.HasPrefix(lw, "unique("):
					add("xorm:"+strings.TrimSuffix(strings.TrimPrefix(lw, "unique("), ")"), col, false)
				case lw == "pk":
					add("pk", col, true)
				}
			}
		}
	}
	// An ID field is the primary key by convention, unless a tag names another.
	if tagged && idField != "" && !slices.ContainsFunc(out, func(u TagUnique) bool { return u.Primary }) {
		out = append(out, TagUnique{Columns: []string{idField}, Primary: true, Fields: []KeyField{{Name: idName, Generated: true}}})
	}
	return out
}

// generated reports a column whose value the database makes: xorm's autoincr, gorm's
// autoIncrement (not autoIncrement:false), bun's autoincrement or identity, a serial
// or identity type, or a default.
func generated(tag string) bool {
	var words []string
	if g := sqltext.Tag(tag, "gorm"); g != "" {
		for _, item := range strings.Split(g, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(item), ":")
			if strings.EqualFold(k, "autoincrement") && strings.EqualFold(v, "false") {
				continue
			}
			words = append(words, k, v)
		}
	}
	if b := sqltext.Tag(tag, "bun"); b != "" {
		for _, p := range strings.Split(b, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), ":")
			words = append(words, k, v)
		}
	}
	if x := sqltext.Tag(tag, "xorm"); x != "" {
		words = append(words, strings.Fields(x)...)
	}
	for _, w := range words {
		w = strings.ToLower(w)
		switch {
		case w == "autoincr", w == "autoincrement", w == "identity", w == "default",
			strings.Contains(w, "serial"), strings.HasPrefix(w, "default("):
			return true
		}
	}
	return false
}

func intType(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// columnOf names the column a model's field maps to: the name its gorm (column:),
// bun (first item) or xorm (a quoted word) tag gives, or the field's name in snake case.
func columnOf(field, tag string) string {
	col := sqltext.Snake(field)
	if g := sqltext.Tag(tag, "gorm"); g != "" {
		for _, item := range strings.Split(g, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(item), ":")
			if strings.EqualFold(k, "column") && v != "" {
				col = strings.ToLower(v)
			}
		}
	}
	if b := sqltext.Tag(tag, "bun"); b != "" {
		parts := strings.Split(b, ",")
		if first := strings.TrimSpace(parts[0]); first != "" && !strings.Contains(first, ":") {
			col = strings.ToLower(first)
		}
	}
	if x := sqltext.Tag(tag, "xorm"); x != "" {
		words := strings.Fields(x)
		for i, w := range words {
			// A quoted word names the column, unless it is a default value (default '').
			if name := strings.Trim(w, "'"); strings.HasPrefix(w, "'") && name != "" && (i == 0 || !strings.EqualFold(words[i-1], "default")) {
				col = strings.ToLower(name)
			}
		}
	}
	return col
}

// modelIndex finds models by their qualified type name ("shop/models.User").
type modelIndex map[string]*Model

// indexModels gathers the models of the package and of every package it depends on.
func indexModels(pass *analysis.Pass, own []Model) modelIndex {
	idx := modelIndex{}
	for _, pf := range pass.AllPackageFacts() {
		if f, ok := pf.Fact.(*ModelsFact); ok {
			for i := range f.Models {
				idx[pf.Package.Path()+"."+f.Models[i].Type] = &f.Models[i]
			}
		}
	}
	for i := range own {
		idx[pass.Pkg.Path()+"."+own[i].Type] = &own[i]
	}
	return idx
}

// resolve names a statement's tables as the database knows them: a model's TableName
// method overrides the ORM's default name.
func (idx modelIndex) resolve(st sqltext.Stmt) sqltext.Stmt {
	if !st.TableMethod || st.Model == "" {
		return st
	}
	m := idx[st.Model]
	if m == nil || m.Table == "" {
		return st
	}
	if st.Kind == sqltext.Read {
		st.Tables = []string{m.Table}
	} else {
		st.Table = m.Table
	}
	return st
}

// tagCovers reports whether the tags of a statement's model declare a unique set among
// keys (any non-primary set when keys are unknown), as schema.Schema.Covers does for
// SQL.
func (idx modelIndex) tagCovers(model string, keys []string) bool {
	m := idx[model]
	if m == nil {
		return false
	}
	for _, u := range m.Uniques {
		if len(keys) == 0 {
			if !u.Primary {
				return true
			}
			continue
		}
		all := true
		for _, c := range u.Columns {
			all = all && slices.Contains(keys, c)
		}
		if all {
			return true
		}
	}
	return false
}
