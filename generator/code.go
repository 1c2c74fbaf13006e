package generator

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// typeCode renders t for jennifer, qualifying named types by their package path, so the
// generated file gets its own imports whatever the source file called them.
func typeCode(t types.Type) jen.Code {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return jen.Qual("unsafe", "Pointer")
		}
		return jen.Id(t.Name())
	case *types.Alias:
		return namedCode(t.Obj(), t.TypeArgs())
	case *types.Named:
		return namedCode(t.Obj(), t.TypeArgs())
	case *types.TypeParam:
		return jen.Id(t.Obj().Name())
	case *types.Pointer:
		return jen.Op("*").Add(typeCode(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(typeCode(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(typeCode(t.Elem()))
	case *types.Map:
		return jen.Map(typeCode(t.Key())).Add(typeCode(t.Elem()))
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return jen.Chan().Op("<-").Add(typeCode(t.Elem()))
		case types.RecvOnly:
			return jen.Op("<-").Chan().Add(typeCode(t.Elem()))
		}
		if e, ok := t.Elem().(*types.Chan); ok && e.Dir() == types.RecvOnly {
			// chan <-chan T reads as chan<- (chan T): say which is meant.
			return jen.Chan().Parens(typeCode(e))
		}
		return jen.Chan().Add(typeCode(t.Elem()))
	case *types.Signature:
		return jen.Func().Add(sigCode(t))
	case *types.Struct:
		fields := make([]jen.Code, t.NumFields())
		for i := range t.NumFields() {
			f := t.Field(i)
			var c *jen.Statement
			if f.Embedded() {
				c = jen.Add(typeCode(f.Type()))
			} else {
				c = jen.Id(f.Name()).Add(typeCode(f.Type()))
			}
			if tag := t.Tag(i); tag != "" {
				c = c.Add(tagCode(tag))
			}
			fields[i] = c
		}
		return jen.Struct(fields...)
	case *types.Interface:
		var items []jen.Code
		for i := range t.NumEmbeddeds() {
			items = append(items, typeCode(t.EmbeddedType(i)))
		}
		for i := range t.NumExplicitMethods() {
			m := t.ExplicitMethod(i)
			items = append(items, jen.Id(m.Name()).Add(sigCode(m.Type().(*types.Signature))))
		}
		if len(items) == 0 {
			return jen.Any()
		}
		return jen.Interface(items...)
	case *types.Union:
		var c *jen.Statement
		for i := range t.Len() {
			term := t.Term(i)
			tc := typeCode(term.Type())
			if term.Tilde() {
				tc = jen.Op("~").Add(tc)
			}
			if c == nil {
				c = jen.Add(tc)
			} else {
				c = c.Op("|").Add(tc)
			}
		}
		return c
	}
	panic(fmt.Sprintf("oncegen: no rendering for type %T", t)) // every go/types type is listed above
}

func namedCode(obj *types.TypeName, args *types.TypeList) jen.Code {
	var c *jen.Statement
	if obj.Pkg() == nil {
		c = jen.Id(obj.Name())
	} else {
		c = jen.Qual(obj.Pkg().Path(), obj.Name())
	}
	if args != nil && args.Len() > 0 {
		targs := make([]jen.Code, args.Len())
		for i := range args.Len() {
			targs[i] = typeCode(args.At(i))
		}
		c = c.Types(targs...)
	}
	return c
}

// sigCode renders a signature's parameters and results (names dropped).
func sigCode(sig *types.Signature) jen.Code {
	params := make([]jen.Code, sig.Params().Len())
	for i := range sig.Params().Len() {
		t := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			params[i] = jen.Op("...").Add(typeCode(t.(*types.Slice).Elem()))
		} else {
			params[i] = typeCode(t)
		}
	}
	results := make([]jen.Code, sig.Results().Len())
	for i := range sig.Results().Len() {
		results[i] = typeCode(sig.Results().At(i).Type())
	}
	c := jen.Params(params...)
	switch len(results) {
	case 0:
	case 1:
		c = c.Add(results[0])
	default:
		c = c.Params(results...)
	}
	return c
}

// tagCode renders a struct tag as the same string, which is part of the struct type's
// identity: raw where it can be, as Go source usually writes it, quoted where it cannot.
// (jennifer's Tag takes a map and writes its keys sorted, which would make another type.)
func tagCode(tag string) jen.Code {
	if strconv.CanBackquote(tag) {
		return jen.Op("`" + tag + "`")
	}
	return jen.Lit(tag)
}

// exprCode renders a type-checked key expression for jennifer. Package-qualified names
// become qualified identifiers, so the generated file imports what the expression uses.
func exprCode(e ast.Expr, info *types.Info) (jen.Code, error) {
	switch e := e.(type) {
	case *ast.Ident:
		return jen.Id(e.Name), nil
	case *ast.BasicLit:
		return jen.Id(e.Value), nil
	case *ast.ParenExpr:
		x, err := exprCode(e.X, info)
		return jen.Parens(x), err
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if pn, ok := info.Uses[id].(*types.PkgName); ok {
				return jen.Qual(pn.Imported().Path(), e.Sel.Name), nil
			}
		}
		x, err := exprCode(e.X, info)
		return jen.Add(x).Dot(e.Sel.Name), err
	case *ast.StarExpr:
		x, err := exprCode(e.X, info)
		return jen.Op("*").Add(x), err
	case *ast.UnaryExpr:
		x, err := exprCode(e.X, info)
		return jen.Op(e.Op.String()).Add(x), err
	case *ast.BinaryExpr:
		x, err := exprCode(e.X, info)
		if err != nil {
			return nil, err
		}
		y, err := exprCode(e.Y, info)
		return jen.Add(x).Op(e.Op.String()).Add(y), err
	case *ast.IndexExpr:
		x, err := exprCode(e.X, info)
		if err != nil {
			return nil, err
		}
		i, err := exprCode(e.Index, info)
		return jen.Add(x).Index(i), err
	case *ast.SliceExpr:
		x, err := exprCode(e.X, info)
		if err != nil {
			return nil, err
		}
		bounds := []ast.Expr{e.Low, e.High}
		if e.Slice3 {
			bounds = append(bounds, e.Max)
		}
		parts := make([]jen.Code, len(bounds))
		for i, b := range bounds {
			if b == nil {
				parts[i] = jen.Empty()
				continue
			}
			if parts[i], err = exprCode(b, info); err != nil {
				return nil, err
			}
		}
		return jen.Add(x).Index(parts...), nil
	case *ast.CallExpr:
		fn, err := exprCode(e.Fun, info)
		if err != nil {
			return nil, err
		}
		args := make([]jen.Code, len(e.Args))
		for i, a := range e.Args {
			c, err := exprCode(a, info)
			if err != nil {
				return nil, err
			}
			if e.Ellipsis != token.NoPos && i == len(e.Args)-1 {
				c = jen.Add(c).Op("...")
			}
			args[i] = c
		}
		return jen.Add(fn).Call(args...), nil
	case *ast.TypeAssertExpr:
		x, err := exprCode(e.X, info)
		if err != nil {
			return nil, err
		}
		return jen.Add(x).Assert(typeCode(info.Types[e.Type].Type)), nil
	case *ast.IndexListExpr:
		x, err := exprCode(e.X, info)
		if err != nil {
			return nil, err
		}
		var ts []jen.Code
		for _, ix := range e.Indices {
			ts = append(ts, typeCode(info.Types[ix].Type))
		}
		return jen.Add(x).Types(ts...), nil
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		if tv, ok := info.Types[e]; ok && tv.IsType() {
			return typeCode(tv.Type), nil
		}
	}
	return nil, fmt.Errorf("a %s has no place in a key: use the parameters, their fields and methods, and the package's functions", nodeName(e))
}

func nodeName(e ast.Expr) string {
	switch e.(type) {
	case *ast.FuncLit:
		return "function literal"
	case *ast.CompositeLit:
		return "composite literal"
	}
	return fmt.Sprintf("%T", e)
}
