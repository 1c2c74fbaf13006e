package generator

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/types"
	"strconv"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/internal/directive"
)

// render writes the generated file of one package: the compile-time guards, then each
// guard's wrapper (and conflict constant, and Rearm function) in source order. std reports
// the standard library's import paths (stdPackages).
func render(pkg *packages.Package, plans []*plan, objs []Object, std func(path string) bool) ([]byte, error) {
	f := jen.NewFilePathName(pkg.PkgPath, pkg.Name)
	f.HeaderComment(Header)
	names := importNames(pkg.Types)
	f.ImportNames(names)
	// The runtime's package name differs from its path's last element: say it.
	f.ImportAlias(RuntimePath, "once")
	// A parameter named like a package the wrapper uses (time, fmt, once...) would shadow it
	// inside the wrapper: import that package under another name.
	locals := map[string]bool{}
	for _, p := range plans {
		locals[p.ctxName], locals[p.recvID] = true, true
		for _, pr := range p.params {
			locals[pr.name] = true
		}
	}
	for path, name := range names {
		if locals[name] {
			f.ImportAlias(path, name+"pkg")
		}
	}

	// Doc comments are kept out of jennifer and gofmt: docs holds each top-level
	// declaration's, in order, and they are put back once the code is formatted (see
	// spliceDocs): formatting them is a fifth of gofmt's work, and they are written in the
	// form gofmt would leave as it is.
	var docs [][]string
	decl := func(doc []string, code jen.Code) {
		f.Line()
		f.Add(code)
		docs = append(docs, doc)
	}

	defs := make([]jen.Code, len(plans))
	for i, p := range plans {
		defs[i] = jen.Id("_").Add(funcTypeCode(p)).Op("=").Add(funcValueCode(p))
	}
	decl([]string{
		"// Compile-time guards: each breaks the build when the function it names no longer",
		"// has the signature its wrapper was generated from. Run go generate again.",
	}, jen.Var().Defs(defs...))

	if len(objs) > 0 {
		reqs := make([]jen.Code, len(objs))
		for i, o := range objs {
			guards := make([]jen.Code, len(o.Guards))
			for j, g := range o.Guards {
				guards[j] = jen.Lit(g)
			}
			reqs[i] = jen.Qual(SchemaPath, "Requirement").Values(
				jen.Id("Kind").Op(":").Qual(SchemaPath, objectKinds[o.Kind]),
				jen.Id("Table").Op(":").Lit(o.Table),
				jen.Id("Name").Op(":").Lit(o.Name),
				jen.Id("Def").Op(":").Lit(o.Def),
				jen.Id("Guards").Op(":").Index().String().Values(guards...))
		}
		decl([]string{
			"// The objects of the database this package's table= guards rely on, registered for",
			"// once.Verify to find, valid and in this form, when the program starts.",
		}, jen.Func().Id("init").Params().Block(
			jen.Qual(SchemaPath, "Require").Custom(jen.Options{Open: "(", Close: ")", Separator: ",", Multi: true}, reqs...)))
	}

	for _, p := range plans {
		if p.g.HasTable() {
			decl(docLines(fmt.Sprintf("%s is the ON CONFLICT clause %s's INSERT into %s must use: it matches the unique index %s text for text, so the insert is the check.",
				directive.ConflictName(p.fn.Name()), p.fn.Name(), p.g.Table, p.g.IndexName())),
				jen.Const().Id(directive.ConflictName(p.fn.Name())).Op("=").Lit(p.g.ConflictClause()))
		}
		code, err := wrapperCode(p)
		if err != nil {
			return nil, err
		}
		decl(docLines(wrapperDoc(p)), code)
		if p.g.Spec().Rearm && !p.g.HasTable() {
			code, err := rearmCode(p)
			if err != nil {
				return nil, err
			}
			decl(docLines(fmt.Sprintf("%s rearms the episode of %s for a key: the next call of %s fires again. It reports whether the latch was set.",
				directive.RearmName(p.fn.Name()), p.fn.Name(), directive.WrapperName(p.fn.Name()))), code)
		}
	}
	// Rendered unformatted: gofmt groups the imports first, then formats the file once.
	f.NoFormat = true
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", pkg.PkgPath, err)
	}
	src, err := gofmt(buf.Bytes(), std)
	if err != nil {
		return nil, err
	}
	return spliceDocs(src, docs)
}

// objectKinds names the runtime's constant for each kind of object a table= guard relies on.
var objectKinds = map[string]string{ObjColumn: "ColumnObject", ObjCheck: "CheckObject", ObjIndex: "IndexObject"}

// importNames maps every package reachable from pkg to its name, so jennifer writes
// "pgx" for github.com/jackc/pgx/v5 and not a name guessed from the path.
func importNames(pkg *types.Package) map[string]string {
	names := map[string]string{RuntimePath: "once", SchemaPath: "onceschema", pgxPath: "pgx", "context": "context", "fmt": "fmt", "time": "time"}
	seen := map[*types.Package]bool{}
	var walk func(*types.Package)
	walk = func(p *types.Package) {
		if seen[p] {
			return
		}
		seen[p] = true
		names[p.Path()] = p.Name()
		for _, imp := range p.Imports() {
			walk(imp)
		}
	}
	walk(pkg)
	return names
}

// funcTypeCode is the type of the wrapped function: func(ctx, params...) results, with
// the receiver first for a method expression.
func funcTypeCode(p *plan) jen.Code {
	sig := p.fn.Type().(*types.Signature)
	var params []jen.Code
	if p.recv != nil {
		params = append(params, typeCode(p.recv.Type()))
	}
	params = append(params, jen.Qual("context", "Context"))
	for _, pr := range p.params {
		params = append(params, paramType(pr))
	}
	c := jen.Func().Params(params...)
	if sig.Results().Len() == 1 {
		return c.Error()
	}
	return c.Params(typeCode(sig.Results().At(0).Type()), jen.Error())
}

// funcValueCode names the wrapped function: F, or a method expression (*T).F / T.F.
func funcValueCode(p *plan) jen.Code {
	if p.recv == nil {
		return jen.Id(p.fn.Name())
	}
	if p.recvPtr {
		return jen.Parens(typeCode(p.recv.Type())).Dot(p.fn.Name())
	}
	return jen.Add(typeCode(p.recv.Type())).Dot(p.fn.Name())
}

func paramType(pr param) jen.Code {
	if pr.variadic {
		return jen.Op("...").Add(typeCode(pr.typ.(*types.Slice).Elem()))
	}
	return typeCode(pr.typ)
}

// names holds the wrapper's local names, chosen so none shadows a parameter or a name a
// key expression uses.
type names struct {
	db, key, scope, out, err, zero, tx, fn, result string
}

func localNames(p *plan) names {
	// The wrapped function's own name too: the closure calls it after key is declared.
	taken := map[string]bool{p.ctxName: true, p.recvID: true, p.fn.Name(): true}
	for _, pr := range p.params {
		taken[pr.name] = true
	}
	for _, list := range [][]directive.TypedExpr{p.keys, p.fprint, exprs(p.scope, p.capX, p.nX, p.sealX)} {
		for _, k := range list {
			ast.Inspect(k.AST, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					taken[id.Name] = true
				}
				return true
			})
		}
	}
	n := names{db: fresh("db", taken), key: fresh("key", taken), scope: fresh("scope", taken),
		out: fresh("out", taken), err: fresh("err", taken), zero: fresh("zero", taken), fn: fresh("fn", taken),
		result: fresh("result", taken)}
	n.tx = "tx"
	for _, pr := range p.params {
		if pr.supplied {
			n.tx = pr.name
		}
	}
	return n
}

func exprs(xs ...*directive.TypedExpr) []directive.TypedExpr {
	var out []directive.TypedExpr
	for _, x := range xs {
		if x != nil {
			out = append(out, *x)
		}
	}
	return out
}

// wrapperCode renders func FOnce.
func wrapperCode(p *plan) (jen.Code, error) {
	n := localNames(p)
	sigParams := []jen.Code{jen.Id(p.ctxName).Qual("context", "Context")}
	if p.g.Spec().TakesDB {
		sigParams = append(sigParams, jen.Id(n.db).Qual(RuntimePath, "DB"))
	}
	for _, pr := range p.params {
		if !pr.supplied {
			sigParams = append(sigParams, jen.Id(pr.name).Add(paramType(pr)))
		}
	}
	var results []jen.Code
	if p.result != nil {
		results = append(results, typeCode(p.result))
	}
	results = append(results, jen.Qual(RuntimePath, "Outcome"), jen.Error())

	var body []jen.Code
	fail := func(errExpr jen.Code) jen.Code {
		var ret []jen.Code
		var pre []jen.Code
		if p.result != nil {
			pre = append(pre, jen.Var().Id(n.zero).Add(typeCode(p.result)))
			ret = append(ret, jen.Id(n.zero))
		}
		ret = append(ret, jen.Qual(RuntimePath, "Outcome").Values(), errExpr)
		return jen.If(jen.Id(n.err).Op("!=").Nil()).Block(append(pre, jen.Return(ret...))...)
	}
	wrapErr := jen.Qual("fmt", "Errorf").Call(jen.Lit("guard "+p.g.Name+": %w"), jen.Id(n.err))

	var keyValue, scopeValue jen.Code
	if !p.g.HasTable() {
		stmts, v, err := encodeKey(p.keys, n.key, n.err, fail(wrapErr))
		if err != nil {
			return nil, err
		}
		body, keyValue = append(body, stmts...), v
		if p.scope != nil {
			stmts, v, err := encodeKey([]directive.TypedExpr{*p.scope}, n.scope, n.err, fail(wrapErr))
			if err != nil {
				return nil, err
			}
			body, scopeValue = append(body, stmts...), v
		}
	}

	// The closure that calls F. A kind that replays F's result to a duplicate gets F as it
	// is, by the runtime's generic function for the kind (once.ForeverValue); every other
	// guard takes a function that returns only an error, and F's result, when it has one, is
	// kept by the closure for the wrapper to return.
	spec := p.g.Spec()
	replays := spec.Replays && p.result != nil && !p.g.HasTable()
	keeps := p.result != nil && !replays
	var args []jen.Code
	args = append(args, jen.Id(p.ctxName))
	for _, pr := range p.params {
		a := jen.Id(pr.name)
		if pr.variadic {
			a = a.Op("...")
		}
		args = append(args, a)
	}
	var call *jen.Statement
	if p.recv != nil {
		call = jen.Id(p.recvID).Dot(p.fn.Name()).Call(args...)
	} else {
		call = jen.Id(p.fn.Name()).Call(args...)
	}
	closureParams := []jen.Code{jen.Id(p.ctxName).Qual("context", "Context")}
	if spec.SuppliesTx != "" || p.g.HasTable() {
		closureParams = append(closureParams, jen.Id(n.tx).Qual(pgxPath, "Tx"))
	}
	// The closure's body is written on its line, as gofmt keeps a short one: gofmt then
	// need not measure a multi-line right-hand side (most of its time on a large file).
	var closure jen.Code
	switch {
	case replays:
		closure = jen.Func().Params(closureParams...).Params(typeCode(p.result), jen.Error()).Custom(jen.Options{Open: "{", Close: "}"}, jen.Return(call))
	case keeps:
		body = append(body, jen.Var().Id(n.result).Add(typeCode(p.result)))
		closure = jen.Func().Params(closureParams...).Params(jen.Id(n.err).Error()).Custom(jen.Options{Open: "{", Close: "}", Separator: ";"},
			jen.List(jen.Id(n.result), jen.Id(n.err)).Op("=").Add(call), jen.Return(jen.Id(n.err)))
	default:
		closure = jen.Func().Params(closureParams...).Error().Custom(jen.Options{Open: "{", Close: "}"}, jen.Return(call))
	}

	guard, err := guardValue(p)
	if err != nil {
		return nil, err
	}
	var doArgs []jen.Code
	doArgs = append(doArgs, jen.Id(p.ctxName))
	if spec.TakesDB {
		doArgs = append(doArgs, jen.Id(n.db))
	}
	if replays {
		doArgs = append(doArgs, guard)
	}
	switch {
	case p.g.HasTable():
	case spec.KeyedByRef():
		// A scope and a fingerprint (forever's) go with the key in a once.Ref.
		ref := []jen.Code{}
		if p.scope != nil {
			ref = append(ref, jen.Id("Scope").Op(":").Add(scopeValue))
		}
		ref = append(ref, jen.Id("Key").Op(":").Add(keyValue))
		if len(p.fprint) > 0 {
			in, err := fingerprintCode(p.fprint)
			if err != nil {
				return nil, err
			}
			ref = append(ref, jen.Id("Input").Op(":").Add(in))
		}
		doArgs = append(doArgs, jen.Qual(RuntimePath, "Ref").Values(ref...))
	default:
		doArgs = append(doArgs, keyValue)
	}
	if p.g.N != (directive.IntOrExpr{}) {
		// The units a call takes (statement's n=), after the key.
		doArgs = append(doArgs, intCode(p.g.N, p.nX))
	}
	// The closure gets a name of its own, so the guard's call reads on one line.
	body = append(body, jen.Id(n.fn).Op(":=").Add(closure))
	doArgs = append(doArgs, jen.Id(n.fn))
	switch {
	case replays:
		body = append(body, jen.Return(jen.Qual(RuntimePath, spec.Guard+"Value").Call(doArgs...)))
	case keeps:
		body = append(body, jen.List(jen.Id(n.out), jen.Id(n.err)).Op(":=").Add(guard).Dot("Do").Call(doArgs...),
			jen.Return(jen.Id(n.result), jen.Id(n.out), jen.Id(n.err)))
	default:
		body = append(body, jen.Return(jen.Add(guard).Dot("Do").Call(doArgs...)))
	}

	fn := jen.Func()
	if p.recv != nil {
		fn = fn.Params(jen.Id(p.recvID).Add(typeCode(p.recv.Type())))
	}
	return fn.Id(directive.WrapperName(p.fn.Name())).Params(sigParams...).Params(results...).Block(body...), nil
}

// rearmCode renders RearmF(ctx, db, key params...) (bool, error) for an episode.
func rearmCode(p *plan) (jen.Code, error) {
	n := localNames(p)
	params := []jen.Code{jen.Id(p.ctxName).Qual("context", "Context"), jen.Id(n.db).Qual(RuntimePath, "DB")}
	for _, pr := range p.keyParams {
		params = append(params, jen.Id(pr.name).Add(paramType(pr)))
	}
	fail := jen.If(jen.Id(n.err).Op("!=").Nil()).Block(jen.Return(jen.False(), jen.Qual("fmt", "Errorf").Call(jen.Lit("guard "+p.g.Name+": %w"), jen.Id(n.err))))
	body, key, err := encodeKey(p.keys, n.key, n.err, fail)
	if err != nil {
		return nil, err
	}
	guard, err := guardValue(p)
	if err != nil {
		return nil, err
	}
	body = append(body, jen.Return(jen.Add(guard).Dot("Rearm").Call(jen.Id(p.ctxName), jen.Id(n.db), key)))
	fn := jen.Func()
	if p.recv != nil {
		fn = fn.Params(jen.Id(p.recvID).Add(typeCode(p.recv.Type())))
	}
	return fn.Id(directive.RearmName(p.fn.Name())).Params(params...).Params(jen.Bool(), jen.Error()).Block(body...), nil
}

// encodeKey returns the code that encodes keys and the value that stands for the result.
// When no part can fail to encode (directive.EncodableWithoutError), the value is the call
// once.MustKey(parts...), which then cannot panic, and there is no code before it; otherwise
// the code is name, errName := once.Key(parts...) followed by fail, and the value is
// name.
func encodeKey(keys []directive.TypedExpr, name, errName string, fail jen.Code) ([]jen.Code, jen.Code, error) {
	parts, err := keyParts(keys)
	if err != nil {
		return nil, nil, err
	}
	sure := true
	for _, k := range keys {
		sure = sure && directive.EncodableWithoutError(k.Type)
	}
	if sure {
		return nil, jen.Qual(RuntimePath, "MustKey").Call(parts...), nil
	}
	return []jen.Code{jen.List(jen.Id(name), jen.Id(errName)).Op(":=").Qual(RuntimePath, "Key").Call(parts...), fail}, jen.Id(name), nil
}

func keyParts(keys []directive.TypedExpr) ([]jen.Code, error) {
	parts := make([]jen.Code, len(keys))
	for i, k := range keys {
		c, err := exprCode(k.AST, k.Info)
		if err != nil {
			return nil, err
		}
		parts[i] = c
	}
	return parts, nil
}

// fingerprintCode is the input a forever key must match: the one expression, or a list.
func fingerprintCode(fp []directive.TypedExpr) (jen.Code, error) {
	parts, err := keyParts(fp)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return jen.Index().Any().Values(parts...), nil
}

func intCode(v directive.IntOrExpr, x *directive.TypedExpr) jen.Code {
	if v.IsLit || x == nil {
		return jen.Id(strconv.FormatInt(v.Lit, 10))
	}
	c, _ := exprCode(x.AST, x.Info) // checked when the plan was made
	return jen.Int64().Parens(c)
}

// durationCode writes d as a readable constant expression: 20 * time.Minute.
func durationCode(d time.Duration) jen.Code {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return jen.Qual("time", u.name)
			}
			return jen.Id(strconv.FormatInt(int64(d/u.d), 10)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Qual("time", "Duration").Call(jen.Id(strconv.FormatInt(int64(d), 10)))
}

// guardValue renders the runtime guard value: once.Kind{Fields}, the kind's guard for the
// key= form, once.Table for a table= form.
func guardValue(p *plan) (jen.Code, error) {
	d := p.g.Directive
	spec := d.Spec()
	typeName, fields := spec.Guard, spec.Fields(d)
	if d.HasTable() {
		typeName = directive.TableGuard
		fields = []directive.Field{{Name: "Name", Value: d.Name}, {Name: "OnConflict", Value: directive.RuntimeName(spec.NotRun)}}
		if spec.Table.Fields != nil {
			fields = append(fields, spec.Table.Fields(d)...)
		}
	}
	var values []jen.Code
	for _, f := range fields {
		var v jen.Code
		switch x := f.Value.(type) {
		case string:
			if x != "" {
				v = jen.Lit(x)
			}
		case bool:
			if x {
				v = jen.True()
			}
		case time.Duration:
			if x != 0 {
				v = durationCode(x)
			}
		case directive.IntOrExpr:
			v = intCode(x, p.typed(x))
		case directive.RuntimeName:
			if x != "" {
				v = jen.Qual(RuntimePath, string(x))
			}
		case *directive.Expr:
			if x != nil {
				if p.sealX == nil || p.sealX.Pos != x.Pos {
					return nil, fmt.Errorf("oncegen: field %s of the %s guard: expression %s was not type-checked", f.Name, d.Kind, x.Text)
				}
				c, err := exprCode(p.sealX.AST, p.sealX.Info)
				if err != nil {
					return nil, err
				}
				v = c
			}
		default:
			return nil, fmt.Errorf("oncegen: field %s of the %s guard has a value of type %T", f.Name, d.Kind, f.Value)
		}
		if v != nil {
			values = append(values, jen.Id(f.Name).Op(":").Add(v))
		}
	}
	return jen.Qual(RuntimePath, typeName).Values(values...), nil
}

// wrapperDoc is the wrapper's doc comment: which promise it keeps, and what a duplicate gets.
func wrapperDoc(p *plan) string {
	d := p.g.Directive
	spec := d.Spec()
	w, f := directive.WrapperName(p.fn.Name()), p.fn.Name()
	article := "a"
	if strings.ContainsRune("aeiou", rune(d.Kind[0])) {
		article = "an"
	}
	head := fmt.Sprintf("%s calls %s under %s %s promise (%s), guard %q", w, f, article, d.Kind, spec.Promise, d.Name)
	if d.HasTable() {
		doc := head + fmt.Sprintf(", on the rows of %s keyed by %s. It runs %s in a transaction; when %s returns once.ErrConflict (its INSERT .. %s returned no row: see once.InsertConflict), it rolls the transaction back and reports %s, without error.",
			d.Table, strings.Join(d.Columns, ", "), f, f, directive.ConflictName(f), spec.Table.NotRunWords)
		if spec.Table.Doc != nil {
			doc += " " + spec.Table.Doc(d)
		}
		return doc
	}
	return head + ", keyed by " + (&Guard{Directive: d}).KeyText() + ". " + spec.Doc(d)
}
