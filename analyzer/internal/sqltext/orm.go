package sqltext

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// The ORMs whose calls are read as statements, by the import path of the package that
// declares the query builder.
const (
	gormPath   = "gorm.io/gorm"
	clausePath = "gorm.io/gorm/clause"
	xormPath   = "xorm.io/xorm"
	bunPath    = "github.com/uptrace/bun"
	entPrefix  = "entgo.io/ent"
)

// ImportsORM reports whether pkg uses one of the ORMs oncelint reads: gorm, xorm or bun
// directly, or an ent client (a package that itself imports entgo.io/ent). A package
// that builds its statements with one holds no SQL text to tell it by.
func ImportsORM(pkg *types.Package) bool {
	for _, imp := range pkg.Imports() {
		switch p := imp.Path(); {
		case p == gormPath, p == bunPath, strings.HasPrefix(p, entPrefix), IsXorm(imp):
			return true
		}
		for _, imp2 := range imp.Imports() {
			if strings.HasPrefix(imp2.Path(), entPrefix) {
				return true
			}
		}
	}
	return false
}

// IsXorm reports xorm's package, or a fork of it under another path (casdoor's
// github.com/xorm-io/xorm): a package named xorm, at a path ending in /xorm, declaring
// xorm's Engine and Session.
func IsXorm(pkg *types.Package) bool {
	if pkg == nil {
		return false
	}
	if pkg.Path() == xormPath {
		return true
	}
	if pkg.Name() != "xorm" || !strings.HasSuffix(pkg.Path(), "/xorm") {
		return false
	}
	_, engine := pkg.Scope().Lookup("Engine").(*types.TypeName)
	_, session := pkg.Scope().Lookup("Session").(*types.TypeName)
	return engine && session
}

// ORM names the library a statement was built with, for messages; empty for SQL text.
type ORM string

// The ORMs read.
const (
	Gorm ORM = "gorm"
	Xorm ORM = "xorm"
	Bun  ORM = "bun"
	Ent  ORM = "ent"
)

// ormSent reads the statement an ORM call sends: the call that ends a chain of builder
// calls (db.Where("email = ?", e).First(&u), client.User.Create().SetEmail(e).Save(ctx)).
// The chain is read for the model or table, the columns compared, a row lock and a
// conflict clause. Calls that only build are not statements.
func ormSent(info *types.Info, call *ast.CallExpr) (Stmt, bool) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return Stmt{}, false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Signature().Recv() == nil {
		return Stmt{}, false
	}
	named := namedOf(fn.Signature().Recv().Type())
	if named == nil || named.Obj().Pkg() == nil {
		return Stmt{}, false
	}
	path, typ := named.Obj().Pkg().Path(), named.Obj().Name()
	b := &builder{info: info, chain: chainOf(call)}
	switch {
	case path == gormPath && typ == "DB":
		return b.gorm(sel.Sel.Name)
	case IsXorm(named.Obj().Pkg()) && (typ == "Engine" || typ == "Session" || typ == "EngineGroup"):
		return b.xorm(sel.Sel.Name)
	case path == bunPath && typ == "SelectQuery":
		return b.bunSelect(sel.Sel.Name)
	case path == bunPath && typ == "InsertQuery":
		return b.bunInsert(sel.Sel.Name)
	case entGenerated(named):
		return b.ent(typ, sel.Sel.Name)
	}
	return Stmt{}, false
}

// builder reads one chain of builder calls, the terminal call first.
type builder struct {
	info  *types.Info
	chain []*ast.CallExpr
}

// chainOf returns the method calls of a chain, from the terminal one down to the first.
func chainOf(call *ast.CallExpr) []*ast.CallExpr {
	var out []*ast.CallExpr
	for {
		out = append(out, call)
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return out
		}
		next, ok := ast.Unparen(sel.X).(*ast.CallExpr)
		if !ok {
			return out
		}
		if _, ok := ast.Unparen(next.Fun).(*ast.SelectorExpr); !ok {
			return out
		}
		call = next
	}
}

func methodName(call *ast.CallExpr) string {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		return sel.Sel.Name
	}
	return ""
}

// calls returns the calls of the chain to a method named name.
func (b *builder) calls(name string) []*ast.CallExpr {
	var out []*ast.CallExpr
	for _, c := range b.chain {
		if methodName(c) == name {
			out = append(out, c)
		}
	}
	return out
}

func (b *builder) has(name string) bool { return len(b.calls(name)) > 0 }

// str returns the constant string value of e.
func (b *builder) str(e ast.Expr) (string, bool) {
	tv, ok := b.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// model sets the statement's table from the model type of e (&u, &users, (*User)(nil),
// User{}), named by the ORM's rule for a type with no name of its own.
func (b *builder) model(st *Stmt, e ast.Expr, plural bool) bool {
	t := ModelType(b.info.TypeOf(e))
	if t == nil {
		return false
	}
	obj := t.Obj()
	st.Model = obj.Pkg().Path() + "." + obj.Name()
	st.Table = TableOf(obj.Name(), plural)
	if tag, ok := bunTable(t); ok && st.ORM == Bun {
		st.Table = tag
	} else {
		st.TableMethod = hasTableName(t)
	}
	return true
}

// ModelType strips pointers and slices down to a named struct type: the model of a row or
// of a slice of rows.
func ModelType(t types.Type) *types.Named {
	for t != nil {
		switch u := t.(type) {
		case *types.Pointer:
			t = u.Elem()
		case *types.Slice:
			t = u.Elem()
		case *types.Alias:
			t = types.Unalias(u)
		case *types.Named:
			if _, ok := u.Underlying().(*types.Struct); ok && u.Obj().Pkg() != nil {
				return u
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}

func namedOf(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

// hasTableName reports a model with a TableName() string method (gorm's and xorm's way
// to name its table), whose value the check reads from the declaring package.
func hasTableName(t *types.Named) bool {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, t.Obj().Pkg(), "TableName")
	fn, ok := obj.(*types.Func)
	return ok && fn.Signature().Params().Len() == 0 && fn.Signature().Results().Len() == 1
}

// bunTable returns the table a bun model names in its bun.BaseModel field's tag
// (`bun:"table:users,alias:u"`).
func bunTable(t *types.Named) (string, bool) {
	s, ok := t.Underlying().(*types.Struct)
	if !ok {
		return "", false
	}
	for i := range s.NumFields() {
		tag := reflectTag(s.Tag(i), "bun")
		for _, part := range strings.Split(tag, ",") {
			if name, ok := strings.CutPrefix(strings.TrimSpace(part), "table:"); ok && name != "" {
				return unquote(strings.ToLower(name)), true
			}
		}
	}
	return "", false
}

// reflectTag returns the value of key in a struct tag.
func reflectTag(tag, key string) string {
	for tag != "" {
		i := 0
		for i < len(tag) && tag[i] == ' ' {
			i++
		}
		tag = tag[i:]
		i = 0
		for i < len(tag) && tag[i] > ' ' && tag[i] != ':' && tag[i] != '"' {
			i++
		}
		if i == 0 || i+1 >= len(tag) || tag[i] != ':' || tag[i+1] != '"' {
			return ""
		}
		name := tag[:i]
		tag = tag[i+1:]
		i = 1
		for i < len(tag) && tag[i] != '"' {
			if tag[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(tag) {
			return ""
		}
		value := tag[1:i]
		tag = tag[i+1:]
		if name == key {
			return value
		}
	}
	return ""
}

// Tag returns the value of key in a struct tag, as reflect.StructTag.Get does.
func Tag(tag, key string) string { return reflectTag(tag, key) }

// where adds the columns a condition compares: SQL text ("email = ? AND org_id = ?"), a
// struct literal (User{Email: e}) or a map literal (map[string]any{"email": e}).
func (b *builder) where(st *Stmt, args []ast.Expr) {
	if len(args) == 0 {
		return
	}
	if s, ok := b.str(args[0]); ok {
		st.Keys = appendKeys(st.Keys, whereKeys("where "+strings.ToLower(s)))
		return
	}
	e := ast.Unparen(args[0])
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return
	}
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		switch k := kv.Key.(type) {
		case *ast.Ident:
			if _, isStruct := b.info.TypeOf(lit).Underlying().(*types.Struct); isStruct {
				st.Keys = appendKeys(st.Keys, []string{Snake(k.Name)})
			}
		default:
			if s, ok := b.str(k); ok {
				st.Keys = appendKeys(st.Keys, []string{strings.ToLower(s)})
			}
		}
	}
}

func whereKeys(low string) []string {
	var keys []string
	if loc := whereRE.FindStringIndex(low); loc != nil {
		for _, m := range keyRE.FindAllStringSubmatch(low[loc[1]:], -1) {
			if !sqlWords[m[1]] {
				keys = appendKeys(keys, []string{m[1]})
			}
		}
	}
	return keys
}

func appendKeys(keys, more []string) []string {
	for _, k := range more {
		found := false
		for _, have := range keys {
			found = found || have == k
		}
		if !found {
			keys = append(keys, k)
		}
	}
	return keys
}

// gorm reads a *gorm.DB chain: First, Take, Last, Find, Count, Scan and Pluck read;
// Create and CreateInBatches insert; FirstOrCreate does both.
func (b *builder) gorm(method string) (Stmt, bool) {
	st := Stmt{ORM: Gorm}
	switch method {
	case "First", "Take", "Last", "Find", "Count", "Scan", "Pluck", "FirstOrInit":
		st.Kind = Read
	case "Create", "CreateInBatches":
		st.Kind = Insert
	case "FirstOrCreate":
		st.Kind, st.FindOrCreate = Insert, true
	default:
		return Stmt{}, false
	}
	if b.has("Raw") || b.has("Exec") {
		return Stmt{}, false // SQL text: read where it is given
	}
	term := b.chain[0]
	found := false
	for _, c := range b.calls("Model") {
		if len(c.Args) == 1 && b.model(&st, c.Args[0], true) {
			found = true
		}
	}
	for _, c := range b.calls("Table") {
		if len(c.Args) > 0 {
			if s, ok := b.str(c.Args[0]); ok {
				st.Table, st.Model, st.TableMethod, found = tableName(s), "", false, true
			}
		}
	}
	switch method {
	case "First", "Take", "Last", "Find", "FirstOrInit", "FirstOrCreate", "Create", "CreateInBatches":
		if !found && len(term.Args) > 0 {
			found = b.model(&st, term.Args[0], true)
		}
		if st.Kind == Read || st.FindOrCreate {
			// Inline conditions: First(&u, "email = ?", e), First(&u, id).
			if len(term.Args) > 1 {
				if _, ok := b.str(term.Args[1]); ok {
					b.where(&st, term.Args[1:])
				} else if len(term.Args) == 2 {
					if _, isLit := ast.Unparen(term.Args[1]).(*ast.CompositeLit); isLit {
						b.where(&st, term.Args[1:])
					} else {
						st.Keys = appendKeys(st.Keys, []string{"id"})
					}
				}
			}
		}
	}
	if !found {
		return Stmt{}, false
	}
	for _, c := range b.calls("Where") {
		b.where(&st, c.Args)
	}
	for _, c := range b.calls("Clauses") {
		for _, arg := range c.Args {
			switch clauseName(b.info, arg) {
			case "Locking":
				st.RowLock = true
			case "OnConflict":
				st.OnConflict = true
			case "Insert": // clause.Insert{Modifier: "IGNORE"}
				st.OnConflict = true
			}
		}
	}
	for _, c := range b.calls("Set") {
		if len(c.Args) == 2 {
			k, _ := b.str(c.Args[0])
			v, _ := b.str(c.Args[1])
			if k == "gorm:query_option" && rowLockRE.MatchString(strings.ToLower(v)) {
				st.RowLock = true
			}
		}
	}
	if st.Kind == Read {
		st.Tables, st.Table = []string{st.Table}, ""
	}
	return st, true
}

// clauseName names the gorm clause type of a Clauses argument (clause.Locking{...}).
func clauseName(info *types.Info, e ast.Expr) string {
	n := namedOf(info.TypeOf(e))
	if n == nil || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != clausePath {
		return ""
	}
	return n.Obj().Name()
}

// xorm reads an xorm Engine or Session chain: Get, Exist, Find and Count read; Insert and
// InsertOne insert. xorm names a table after its struct in snake case, not plural.
func (b *builder) xorm(method string) (Stmt, bool) {
	st := Stmt{ORM: Xorm}
	switch method {
	case "Get", "Exist", "Find", "Count", "Iterate", "FindAndCount":
		st.Kind = Read
	case "Insert", "InsertOne":
		st.Kind = Insert
	default:
		return Stmt{}, false
	}
	term := b.chain[0]
	if sqls := b.calls("SQL"); len(sqls) > 0 {
		if len(sqls[0].Args) > 0 {
			if s, ok := b.str(sqls[0].Args[0]); ok {
				st := Parse(s)
				return st, st.Kind != Other
			}
		}
		return Stmt{}, false
	}
	if len(term.Args) > 0 {
		if _, isStr := b.str(term.Args[0]); !isStr {
			b.model(&st, term.Args[0], false)
		}
	}
	if st.Kind == Read {
		// A bean's set fields are its conditions: the bean read into (Get(&User{Email:
		// e}), or a variable made from such a literal), and Find's condition beans.
		for _, arg := range term.Args {
			if _, isStr := b.str(arg); !isStr {
				b.where(&st, []ast.Expr{b.bean(arg)})
			}
		}
	}
	for _, c := range b.calls("Table") {
		if len(c.Args) > 0 {
			if s, ok := b.str(c.Args[0]); ok {
				st.Table, st.Model, st.TableMethod = tableName(s), "", false
			} else {
				b.model(&st, c.Args[0], false)
			}
		}
	}
	if st.Table == "" {
		return Stmt{}, false
	}
	for _, name := range []string{"Where", "And", "Or"} {
		for _, c := range b.calls(name) {
			b.where(&st, c.Args)
		}
	}
	if b.has("ID") {
		st.Keys = appendKeys(st.Keys, []string{"id"})
	}
	st.RowLock = b.has("ForUpdate")
	if st.Kind == Read {
		st.Tables, st.Table = []string{st.Table}, ""
	}
	return st, true
}

// bean returns the struct literal a bean argument is, or the one the local variable it
// names (u, &u) was made from: u := User{Owner: o, Name: n}; engine.Get(&u) compares
// owner and name. Fields set on the variable later are not seen, so the columns found
// are fewer than the read compares, never more.
func (b *builder) bean(e ast.Expr) ast.Expr {
	x := ast.Unparen(e)
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op == token.AND {
		x = ast.Unparen(u.X)
	}
	id, ok := x.(*ast.Ident)
	if !ok {
		return e
	}
	v, ok := b.info.Uses[id].(*types.Var)
	if !ok || v.IsField() || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() {
		return e
	}
	if lit := initLiteral(b.info, v); lit != nil {
		return lit
	}
	return e
}

// litCache caches, for the last types.Info asked about, its composite literals in
// source order.
var litCache struct {
	sync.Mutex
	info *types.Info
	lits []*ast.CompositeLit
}

// initLiteral returns the composite literal a variable is declared with (v := T{...},
// v := &T{...}, var v = T{...}): the first one of v's type that starts right after its
// name.
func initLiteral(info *types.Info, v *types.Var) *ast.CompositeLit {
	litCache.Lock()
	if litCache.info != info {
		litCache.info, litCache.lits = info, nil
		for e := range info.Types {
			if lit, ok := e.(*ast.CompositeLit); ok {
				litCache.lits = append(litCache.lits, lit)
			}
		}
		slices.SortFunc(litCache.lits, func(a, b *ast.CompositeLit) int { return int(a.Pos()) - int(b.Pos()) })
	}
	lits := litCache.lits
	litCache.Unlock()
	start := v.Pos() + token.Pos(len(v.Name()))
	i, _ := slices.BinarySearchFunc(lits, start, func(l *ast.CompositeLit, p token.Pos) int { return int(l.Pos()) - int(p) })
	if i >= len(lits) || lits[i].Pos()-start > 8 {
		return nil
	}
	lt := info.TypeOf(lits[i])
	vt := v.Type()
	if p, ok := vt.(*types.Pointer); ok {
		vt = p.Elem()
	}
	if lt == nil || !types.Identical(lt, vt) {
		return nil
	}
	return lits[i]
}

// bunSelect reads a bun SelectQuery ending in Scan, Exists, Count or ScanAndCount.
func (b *builder) bunSelect(method string) (Stmt, bool) {
	switch method {
	case "Scan", "Exists", "Count", "ScanAndCount":
	default:
		return Stmt{}, false
	}
	st := Stmt{ORM: Bun, Kind: Read}
	if !b.bunTable(&st) {
		return Stmt{}, false
	}
	for _, c := range b.calls("Where") {
		b.where(&st, c.Args)
	}
	for _, c := range b.calls("For") {
		if len(c.Args) > 0 {
			if s, ok := b.str(c.Args[0]); ok && rowLockRE.MatchString("for "+strings.ToLower(s)) {
				st.RowLock = true
			}
		}
	}
	st.Tables, st.Table = []string{st.Table}, ""
	return st, true
}

// bunInsert reads a bun InsertQuery ending in Exec or Scan; On("CONFLICT ...") and
// Ignore() are its conflict clauses.
func (b *builder) bunInsert(method string) (Stmt, bool) {
	if method != "Exec" && method != "Scan" {
		return Stmt{}, false
	}
	st := Stmt{ORM: Bun, Kind: Insert}
	if !b.bunTable(&st) {
		return Stmt{}, false
	}
	for _, c := range b.calls("On") {
		if len(c.Args) > 0 {
			if s, ok := b.str(c.Args[0]); ok && strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "conflict") {
				st.OnConflict = true
			}
		}
	}
	if b.has("Ignore") {
		st.OnConflict = true
	}
	return st, true
}

// bunTable finds a bun query's table: Table("users"), or its Model's.
func (b *builder) bunTable(st *Stmt) bool {
	for _, c := range b.calls("Table") {
		if len(c.Args) > 0 {
			if s, ok := b.str(c.Args[0]); ok {
				st.Table = tableName(s)
				return true
			}
		}
	}
	for _, c := range b.calls("Model") {
		if len(c.Args) == 1 && b.model(st, c.Args[0], true) {
			return true
		}
	}
	return false
}

// entGenerated reports a type of an ent generated client: a UserQuery (with Where), a
// UserCreate or UserCreateBulk (with Mutation or Save), a UserUpsertOne (with Ignore).
func entGenerated(t *types.Named) bool {
	name := t.Obj().Name()
	has := func(m string) bool {
		obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, t.Obj().Pkg(), m)
		_, ok := obj.(*types.Func)
		return ok
	}
	switch {
	case strings.HasSuffix(name, "Query"):
		return has("Where") && (has("Exist") || has("Only"))
	case strings.HasSuffix(name, "CreateBulk"):
		return has("Save")
	case strings.HasSuffix(name, "Create"):
		return has("Mutation") && has("Save")
	case strings.HasSuffix(name, "UpsertOne"), strings.HasSuffix(name, "UpsertBulk"):
		return has("Ignore") && has("Exec")
	}
	return false
}

// entPredicateSuffixes are the endings of ent's generated field predicates (EmailEQ,
// OrgIDIn), longest first.
var entPredicateSuffixes = []string{"EqualFold", "ContainsFold", "HasPrefix", "HasSuffix", "Contains", "NotNil", "IsNil", "NotIn", "GTE", "LTE", "NEQ", "EQ", "GT", "LT", "In"}

// ent reads an ent generated client's builders: a Query ending in Exist, Only, First,
// All, Count or IDs reads; a Create (or CreateBulk) ending in Save or Exec inserts, with
// a conflict clause when OnConflict made it an Upsert.
func (b *builder) ent(typ, method string) (Stmt, bool) {
	st := Stmt{ORM: Ent}
	var entity string
	switch {
	case strings.HasSuffix(typ, "Query"):
		switch strings.TrimSuffix(method, "X") {
		case "Exist", "Only", "First", "All", "Count", "IDs", "OnlyID", "FirstID":
		default:
			return Stmt{}, false
		}
		st.Kind, entity = Read, strings.TrimSuffix(typ, "Query")
		for _, c := range b.calls("Where") {
			for _, arg := range c.Args {
				st.Keys = appendKeys(st.Keys, b.entKeys(arg))
			}
		}
		st.RowLock = b.has("ForUpdate") || b.has("ForShare")
	case strings.HasSuffix(typ, "UpsertOne"), strings.HasSuffix(typ, "UpsertBulk"):
		st.Kind, st.OnConflict = Insert, true
		entity = strings.TrimSuffix(strings.TrimSuffix(typ, "UpsertOne"), "UpsertBulk")
	case strings.HasSuffix(typ, "CreateBulk"), strings.HasSuffix(typ, "Create"):
		switch method {
		case "Save", "SaveX", "Exec", "ExecX":
		default:
			return Stmt{}, false
		}
		st.Kind = Insert
		entity = strings.TrimSuffix(strings.TrimSuffix(typ, "CreateBulk"), "Create")
	default:
		return Stmt{}, false
	}
	if entity == "" {
		return Stmt{}, false
	}
	st.Table = TableOf(entity, true)
	if st.Kind == Read {
		st.Tables, st.Table = []string{st.Table}, ""
	}
	return st, true
}

// entKeys returns the columns an ent predicate compares: user.EmailEQ(e) compares
// email; user.And(...) and user.Or(...) what their arguments do.
func (b *builder) entKeys(e ast.Expr) []string {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return nil
	}
	var name string
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
	case *ast.Ident:
		name = f.Name
	}
	switch {
	case name == "And" || name == "Or" || name == "Not":
		var keys []string
		for _, arg := range call.Args {
			keys = appendKeys(keys, b.entKeys(arg))
		}
		return keys
	case strings.HasPrefix(name, "Has"):
		return nil // an edge, not a column
	}
	for _, suf := range entPredicateSuffixes {
		if base, ok := strings.CutSuffix(name, suf); ok && base != "" {
			name = base
			break
		}
	}
	return []string{Snake(name)}
}

// tableName normalises a table named in code: lower case, no quotes, no alias.
func tableName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		s = s[:i]
	}
	return unquote(strings.ReplaceAll(s, "`", ""))
}

// TableOf names the table of a model type by the ORMs' default rule: the type's name in
// snake case, plural for gorm, bun and ent (User → users, APIKey → api_keys), singular
// for xorm.
func TableOf(typeName string, plural bool) string {
	s := Snake(typeName)
	if !plural {
		return s
	}
	i := strings.LastIndex(s, "_") + 1
	return s[:i] + Plural(s[i:])
}

// Snake converts a Go name to snake case, keeping initialisms whole: UserID → user_id,
// APIKey → api_key.
func Snake(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				(unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var irregular = map[string]string{"person": "people", "child": "children", "man": "men", "woman": "women", "mouse": "mice", "datum": "data"}

// Plural returns the English plural of a lower-case word, by the common rules the ORMs'
// inflectors follow.
func Plural(w string) string {
	if p, ok := irregular[w]; ok {
		return p
	}
	switch {
	case w == "":
		return w
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"),
		strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		return w + "es"
	case len(w) > 1 && strings.HasSuffix(w, "y") && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}
