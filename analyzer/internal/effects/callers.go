package effects

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"

	"github.com/oncekit/once/internal/directive"
)

// callerIndex is what the module's other packages do with a package's functions, read
// from their source without type-checking: which of them call a function (by name: a
// package's function through its import, a method through any value), and whether a
// promise is held above each call. go/analysis sees a package before the packages that
// import it, so this is how an exported function learns whether anything in the module
// calls it at all, and whether a caller holds a promise.
//
// Reading without types makes method calls match by name alone, which can only add
// callers: a method of the module wrongly thought promised is judged at its callers
// instead of at its definition, never lost.
type callerIndex struct {
	// calls maps a callee's key (see funcKey) to the calls made of it.
	calls map[string][]indexCall
	// promised holds the declaration keys (see declKey) of functions that hold a promise
	// or are called under one (transitively, through the index's own calls).
	promised map[string]bool
	// decls maps a call's key to the declarations it may call: one for a function, every
	// method of that name for a method, each with its package.
	decls map[string][]indexDecl
	// imports holds, for each package of the module, the paths its files import.
	imports map[string]map[string]bool
}

// indexDecl is one function declared in the module's source.
type indexDecl struct {
	pkg, key string // its package's path and its declaration key
}

// indexCall is one call found in the module's source.
type indexCall struct {
	pkg     string // the calling package's path
	from    string // the calling function's declaration key (see declKey)
	guarded bool   // made in a closure given to a guard of the runtime
	// checks are the keys of the calls whose outcome a branch before this call tests
	// and leaves the block on (`if !x.TryLock(..) { return }`, `ok, _ := x.Claim(..); if
	// !ok { return }`): the call runs under a hand-written latch when one of them is
	// a latch (see LatchFact), which only a package that imports it can tell.
	checks []string
	// args are the call's arguments that name a constant as read without types: a
	// literal's source ("\"all\"", "3"), or "path.Name" for a name selected from an
	// imported package; "" for any other argument. Nil when no argument is one.
	args []string
}

// funcKey names a function for the index: "pkg/path.F" for a function, ".M" for any
// method named M.
func funcKey(pkg, recv, name string) string {
	if recv != "" {
		return "." + name
	}
	return pkg + "." + name
}

// declKey names a declared function for the index: "pkg/path.F", or "pkg/path.T.M" for
// a method. Calls are keyed by funcKey, which cannot tell a method's type: what a call
// of a method named M under a promise covers is the methods named M its package can
// reach (its own and those of the packages it imports), not every method of that name.
func declKey(pkg, recv, name string) string {
	if recv != "" {
		return pkg + "." + recv + "." + name
	}
	return pkg + "." + name
}

var indexes sync.Map // root → *indexLoad

type indexLoad struct {
	once sync.Once
	idx  *callerIndex
}

// moduleCallers returns the caller index of the module holding the package, or nil when
// the package's source root cannot be told.
func moduleCallers(pass *analysis.Pass) *callerIndex {
	if len(pass.Files) == 0 {
		return nil
	}
	dir := filepath.Dir(pass.Fset.File(pass.Files[0].Pos()).Name())
	root, prefix, ok := sourceRoot(pass, dir)
	if !ok {
		return nil
	}
	v, _ := indexes.LoadOrStore(root, new(indexLoad))
	l := v.(*indexLoad)
	l.once.Do(func() { l.idx = buildIndex(root, prefix) })
	return l.idx
}

// sourceRoot returns the directory the module's packages live under and the import path
// it stands for: the module root and path, or (with no module, in GOPATH mode) the src
// directory and "".
func sourceRoot(pass *analysis.Pass, dir string) (root, prefix string, ok bool) {
	if m := pass.Module; m != nil && m.Path != "" {
		root := moduleRoot(dir)
		if root == dir && !fileExists(filepath.Join(dir, "go.mod")) {
			return "", "", false
		}
		return root, m.Path, true
	}
	p := pass.Pkg.Path()
	slashed := filepath.ToSlash(dir)
	if !strings.HasSuffix(slashed, "/"+p) {
		return "", "", false
	}
	return filepath.FromSlash(strings.TrimSuffix(slashed, "/"+p)), "", true
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// buildIndex reads every package under root (not tests, vendor, testdata or nested
// modules) and indexes their calls.
func buildIndex(root, prefix string) *callerIndex {
	idx := &callerIndex{calls: map[string][]indexCall{}, promised: map[string]bool{}, imports: map[string]map[string]bool{}, decls: map[string][]indexDecl{}}
	fset := token.NewFileSet()
	var decls []string // keys of functions holding a directive
	_ = filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			base := d.Name()
			if name != root && (base == "vendor" || base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") ||
				(prefix != "" && fileExists(filepath.Join(name, "go.mod")))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(name))
		if err != nil {
			return nil
		}
		pkg := path.Join(prefix, filepath.ToSlash(rel))
		if rel == "." {
			pkg = prefix
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		decls = append(decls, idx.addFile(pkg, f)...)
		return nil
	})
	// Promised: a function with a directive, and whatever is called from one or under a
	// guard, transitively.
	callees := map[string][]calleeRef{} // caller's declaration key → its unguarded calls
	starts := decls
	for to, calls := range idx.calls {
		for _, c := range calls {
			if c.guarded {
				starts = append(starts, idx.reach(c.pkg, to)...)
				continue
			}
			callees[c.from] = append(callees[c.from], calleeRef{to: to, pkg: c.pkg})
		}
	}
	for _, k := range starts {
		idx.mark(k, callees)
	}
	return idx
}

// calleeRef is a call's key and the package that makes it.
type calleeRef struct{ to, pkg string }

// mark marks the declaration k and everything it calls promised.
func (idx *callerIndex) mark(k string, callees map[string][]calleeRef) {
	if idx.promised[k] {
		return
	}
	idx.promised[k] = true
	for _, c := range callees[k] {
		for _, d := range idx.reach(c.pkg, c.to) {
			idx.mark(d, callees)
		}
	}
}

// reach returns the declaration keys a call keyed to, made in package pkg, may call: the
// function, or the methods of that name declared in pkg or in a package it imports.
func (idx *callerIndex) reach(pkg, to string) []string {
	var out []string
	method := strings.HasPrefix(to, ".")
	for _, d := range idx.decls[to] {
		if !method || d.pkg == pkg || idx.imports[pkg][d.pkg] {
			out = append(out, d.key)
		}
	}
	return out
}

// addFile indexes the calls of one file and returns the keys of its functions that hold
// a directive.
func (idx *callerIndex) addFile(pkg string, f *ast.File) []string {
	imports := map[string]string{} // local name → path
	paths := idx.imports[pkg]
	if paths == nil {
		paths = map[string]bool{}
		idx.imports[pkg] = paths
	}
	runtimeName := ""
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if strings.HasPrefix(name, "v") && len(name) > 1 && strings.Trim(name[1:], "0123456789") == "" {
			name = path.Base(path.Dir(p)) // a major-version suffix: the package is named by the element before
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
		paths[p] = true
		if p == RuntimePath {
			runtimeName = name
		}
	}
	var promised []string
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		recv, typ := "", ""
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			recv, typ = "recv", directive.ReceiverTypeName(fd)
		}
		from := declKey(pkg, typ, fd.Name.Name)
		k := funcKey(pkg, recv, fd.Name.Name)
		idx.decls[k] = append(idx.decls[k], indexDecl{pkg: pkg, key: from})
		if fd.Doc != nil && hasOnceDirective(fd.Doc) {
			promised = append(promised, from)
		}
		idx.addBody(pkg, from, fd.Body, imports, runtimeName)
	}
	return promised
}

// hasOnceDirective reports a //once: line in a doc comment.
func hasOnceDirective(g *ast.CommentGroup) bool {
	for _, c := range g.List {
		if strings.HasPrefix(c.Text, "//once:") {
			return true
		}
	}
	return false
}

// branchChecks returns, for the branches of body that leave their block, the region
// after each and the keys of the calls whose outcome it tests: the calls in its
// condition and init, and the calls earlier in the block whose results the condition
// reads.
func branchChecks(pkg string, body *ast.BlockStmt, imports map[string]string) []indexRegion {
	var out []indexRegion
	var visit func(list []ast.Stmt, end token.Pos)
	visit = func(list []ast.Stmt, end token.Pos) {
		assigned := map[string][]string{} // variable → keys of the calls assigned to it
		for _, st := range list {
			if a, ok := st.(*ast.AssignStmt); ok && len(a.Rhs) == 1 {
				if call, ok := ast.Unparen(a.Rhs[0]).(*ast.CallExpr); ok {
					if k := callKey(pkg, call, imports); k != "" {
						for _, l := range a.Lhs {
							if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
								assigned[id.Name] = []string{k}
							}
						}
					}
				}
			}
			ifs, ok := st.(*ast.IfStmt)
			if !ok || !checkOf(ifs).exits {
				continue
			}
			var keys []string
			inspect := func(n ast.Node) {
				ast.Inspect(n, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						if k := callKey(pkg, n, imports); k != "" {
							keys = append(keys, k)
						}
					case *ast.Ident:
						keys = append(keys, assigned[n.Name]...)
					}
					return true
				})
			}
			if ifs.Init != nil {
				inspect(ifs.Init)
			}
			inspect(ifs.Cond)
			if len(keys) > 0 {
				out = append(out, indexRegion{from: ifs.End(), to: end, keys: keys})
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			visit(n.List, n.End())
		case *ast.CaseClause:
			visit(n.Body, n.End())
		case *ast.CommClause:
			visit(n.Body, n.End())
		}
		return true
	})
	return out
}

// indexRegion is the part of a body after a branch that leaves its block.
type indexRegion struct {
	from, to token.Pos
	keys     []string
}

// callKey is the index's key of a call's function (see funcKey), or "".
func callKey(pkg string, call *ast.CallExpr, imports map[string]string) string {
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return funcKey(pkg, "", fun.Name)
	case *ast.SelectorExpr:
		if x, ok := ast.Unparen(fun.X).(*ast.Ident); ok && imports[x.Name] != "" {
			return funcKey(imports[x.Name], "", fun.Sel.Name)
		}
		return funcKey("", "recv", fun.Sel.Name)
	case *ast.IndexExpr: // F[T](...)
		if id, ok := fun.X.(*ast.Ident); ok {
			return funcKey(pkg, "", id.Name)
		}
	}
	return ""
}

// addBody indexes the calls in one function body.
func (idx *callerIndex) addBody(pkg, from string, body *ast.BlockStmt, imports map[string]string, runtimeName string) {
	var guards []ast.Node // closures given to a runtime guard, enclosing the current node
	var stack []ast.Node
	regions := branchChecks(pkg, body, imports)
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(guards) > 0 && guards[len(guards)-1] == top {
				guards = guards[:len(guards)-1]
			}
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncLit:
			if runtimeName != "" && len(stack) >= 2 {
				if call, ok := stack[len(stack)-2].(*ast.CallExpr); ok && call.Fun != n && mentions(call.Fun, runtimeName) {
					guards = append(guards, n)
				}
			}
		case *ast.CallExpr:
			if key := callKey(pkg, n, imports); key != "" {
				var checks []string
				for _, r := range regions {
					if n.Pos() >= r.from && n.Pos() < r.to {
						checks = append(checks, r.keys...)
					}
				}
				idx.calls[key] = append(idx.calls[key], indexCall{pkg: pkg, from: from, guarded: len(guards) > 0, checks: checks, args: constArgs(n, imports)})
			}
		}
		return true
	})
}

// constArgs renders the arguments of a call that may name constants (see
// indexCall.args), or returns nil when none may.
func constArgs(call *ast.CallExpr, imports map[string]string) []string {
	var out []string
	for i, a := range call.Args {
		s := ""
		switch x := ast.Unparen(a).(type) {
		case *ast.BasicLit:
			s = x.Value
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && imports[id.Name] != "" {
				s = imports[id.Name] + "." + x.Sel.Name
			}
		}
		if s != "" && out == nil {
			out = make([]string, len(call.Args))
		}
		if out != nil {
			out[i] = s
		}
	}
	return out
}

// mentions reports whether the expression refers to the identifier name.
func mentions(e ast.Expr, name string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// external returns, for the function fn of package pkg, the calls the module's other
// packages make of it. A method is matched by name, in packages that import its package
// (a value of the type is seldom used where its package is not imported; a field whose
// type it is may be declared in another file of the calling package).
func (idx *callerIndex) external(pkg string, fn *Func) []indexCall {
	if idx == nil {
		return nil
	}
	method := fn.Obj.Signature().Recv() != nil
	recv := ""
	if method {
		recv = "recv"
	}
	var out []indexCall
	for _, c := range idx.calls[funcKey(pkg, recv, fn.Obj.Name())] {
		if c.pkg == pkg || (method && !idx.imports[c.pkg][pkg]) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// latched reports whether the call is made after a branch on a latch whose index key
// is among latches.
func (c indexCall) latched(latches map[string]bool) bool {
	for _, k := range c.checks {
		if latches[k] {
			return true
		}
	}
	return false
}

// isPromised reports whether the call is made under a promise.
func (idx *callerIndex) isPromised(c indexCall) bool { return c.guarded || idx.promised[c.from] }
