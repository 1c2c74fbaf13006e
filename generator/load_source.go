package generator

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"

	"golang.org/x/tools/go/packages"
)

// loadSource loads the packages patterns name as Load does, without the go command ever
// compiling them: it lists them (no compile), parses their files, asks the go command for
// the export data of their imports alone, and type-checks them here, each once.
//
// packages.Load with types asks the go command for the export data of every package it
// lists, the named ones too, which it compiles (type-check, SSA and code generation) for
// nothing: the named packages are type-checked from source anyway. A package about to be
// regenerated has usually just been edited, so that compile is not in the build cache: on a
// mid-size service package it was two thirds of oncegen's time (BENCHMARKS.md).
//
// ok is false when a named package uses cgo, whose files only the go command can prepare:
// Load then loads with packages.Load.
func loadSource(cfg LoadConfig, patterns []string) (pkgs []*packages.Package, ok bool, err error) {
	fset := token.NewFileSet()
	base := packages.Config{Dir: cfg.Dir, Env: cfg.Env, BuildFlags: cfg.BuildFlags, Fset: fset, ParseFile: parseFile}

	// The named packages, found without resolving their imports.
	list := base
	list.Mode = packages.NeedName | packages.NeedFiles | packages.NeedModule
	roots, err := packages.Load(&list, patterns...)
	if err != nil {
		return nil, false, fmt.Errorf("loading packages: %w", err)
	}
	if len(roots) == 0 {
		return nil, true, nil
	}
	if !parseRoots(fset, roots) {
		return nil, false, nil
	}

	// Their imports, from export data.
	byPath := map[string]*packages.Package{}
	for _, r := range roots {
		byPath[r.PkgPath] = r
	}
	need := map[string]bool{}
	for _, r := range roots {
		for _, f := range r.Syntax {
			for _, spec := range f.Imports {
				if path, err := strconv.Unquote(spec.Path.Value); err == nil && path != "unsafe" && byPath[path] == nil {
					need[path] = true
				}
			}
		}
	}
	deps := map[string]*packages.Package{}
	var sizes types.Sizes
	if len(need) > 0 {
		paths := make([]string, 0, len(need))
		for p := range need {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		imports := base
		imports.Mode = packages.NeedName | packages.NeedFiles | packages.NeedTypes | packages.NeedImports |
			packages.NeedModule | packages.NeedTypesSizes
		loaded, err := packages.Load(&imports, paths...)
		if err != nil {
			return nil, false, fmt.Errorf("loading packages: %w", err)
		}
		for _, p := range loaded {
			deps[p.PkgPath] = p
			if sizes == nil {
				sizes = p.TypesSizes
			}
		}
	}
	if sizes == nil {
		sizes = types.SizesFor("gc", runtime.GOARCH)
	}
	typeCheckRoots(fset, roots, byPath, deps, sizes)
	return roots, true, nil
}

// parseFile parses a file for generation: a file carrying Header is read as the empty file
// of its package.
func parseFile(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
	if IsGenerated(src) {
		// What it declared is about to be regenerated; a stale or hand-broken copy must not
		// stand in the way.
		src = blankFile(src)
	}
	return parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
}

// parseRoots parses every root's files, in parallel, keeping each package's files in order
// and its syntax errors as its errors. It reports false when a root uses cgo.
func parseRoots(fset *token.FileSet, roots []*packages.Package) bool {
	type job struct {
		pkg  *packages.Package
		i    int
		file string
	}
	var jobs []job
	errs := make([][][]packages.Error, len(roots))
	for ri, r := range roots {
		r.Syntax = make([]*ast.File, len(r.GoFiles))
		errs[ri] = make([][]packages.Error, len(r.GoFiles))
		for i, name := range r.GoFiles {
			jobs = append(jobs, job{r, i, name})
		}
	}
	index := map[*packages.Package]int{}
	for ri, r := range roots {
		index[r] = ri
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var perr []packages.Error
			src, err := os.ReadFile(j.file)
			var f *ast.File
			if err == nil {
				f, err = parseFile(fset, j.file, src)
			}
			var list scanner.ErrorList
			switch {
			case errors.As(err, &list):
				for _, e := range list {
					perr = append(perr, packages.Error{Pos: e.Pos.String(), Msg: e.Msg, Kind: packages.ParseError})
				}
			case err != nil:
				perr = append(perr, packages.Error{Pos: j.file + ":1", Msg: err.Error(), Kind: packages.ParseError})
			}
			j.pkg.Syntax[j.i] = f
			errs[index[j.pkg]][j.i] = perr
		}()
	}
	wg.Wait()
	for ri, r := range roots {
		files := r.Syntax[:0]
		for i, f := range r.Syntax {
			r.Errors = append(r.Errors, errs[ri][i]...)
			if f == nil {
				continue
			}
			for _, spec := range f.Imports {
				if spec.Path.Value == `"C"` {
					return false
				}
			}
			files = append(files, f)
		}
		r.Syntax = files
	}
	return true
}

// typeCheckRoots type-checks each root from its syntax, a root it imports first (in
// parallel where they do not depend on each other), every other import from deps' export
// data, and fills in its Fset, Types, TypesInfo, TypesSizes, Imports and Errors as
// packages.Load does. An import the go command could not resolve is an error of the root
// at its import; its type errors are the root's too.
func typeCheckRoots(fset *token.FileSet, roots []*packages.Package, byPath, deps map[string]*packages.Package, sizes types.Sizes) {
	done := map[*packages.Package]chan struct{}{}
	for _, r := range roots {
		done[r] = make(chan struct{})
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, r := range roots {
		r.Fset, r.TypesSizes = fset, sizes
		r.Imports = map[string]*packages.Package{}
		for _, f := range r.Syntax {
			for _, spec := range f.Imports {
				path, err := strconv.Unquote(spec.Path.Value)
				if err != nil || path == "unsafe" {
					continue
				}
				if p := byPath[path]; p != nil {
					r.Imports[path] = p
					continue
				}
				d := deps[path]
				if d == nil {
					r.Errors = append(r.Errors, packages.Error{Pos: fset.Position(spec.Path.Pos()).String(),
						Msg: fmt.Sprintf("could not import %s: the go command listed no such package", path), Kind: packages.ListError})
					continue
				}
				r.Imports[path] = d
				for _, e := range d.Errors {
					if !tolerated(e) {
						r.Errors = append(r.Errors, packages.Error{Pos: fset.Position(spec.Path.Pos()).String(), Msg: e.Msg, Kind: packages.ListError})
					}
				}
			}
		}
	}
	// A cycle among the roots would wait for ever: refuse it before waiting.
	if cycle := importCycle(roots); cycle != nil {
		for _, r := range cycle {
			r.Errors = append(r.Errors, packages.Error{Pos: "-", Msg: "import cycle not allowed: " + r.PkgPath, Kind: packages.ListError})
			r.Types = types.NewPackage(r.PkgPath, r.Name)
		}
		return
	}
	for _, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[r])
			for _, imp := range r.Imports {
				if ch, ok := done[imp]; ok {
					<-ch
				}
			}
			sem <- struct{}{}
			defer func() { <-sem }()
			checkRoot(fset, r, sizes)
		}()
	}
	wg.Wait()
}

// checkRoot type-checks one root whose imports are loaded.
func checkRoot(fset *token.FileSet, r *packages.Package, sizes types.Sizes) {
	r.Types = types.NewPackage(r.PkgPath, r.Name)
	r.TypesInfo = &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Instances:    map[*ast.Ident]types.Instance{},
		Scopes:       map[ast.Node]*types.Scope{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		FileVersions: map[*ast.File]string{},
	}
	tc := &types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if path == "unsafe" {
				return types.Unsafe, nil
			}
			p := r.Imports[path]
			switch {
			case p == nil:
				return nil, fmt.Errorf("no package %s was loaded", path)
			case p.Types != nil && p.Types.Complete():
				return p.Types, nil
			case len(p.Errors) > 0:
				return nil, errors.New(p.Errors[0].Msg)
			}
			return nil, fmt.Errorf("%s has no complete type information", path)
		}),
		Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) {
				r.Errors = append(r.Errors, packages.Error{Pos: te.Fset.Position(te.Pos).String(), Msg: te.Msg, Kind: packages.TypeError})
				return
			}
			r.Errors = append(r.Errors, packages.Error{Pos: "-", Msg: err.Error(), Kind: packages.UnknownError})
		},
		Sizes: sizes,
	}
	if r.Module != nil && r.Module.GoVersion != "" {
		tc.GoVersion = "go" + r.Module.GoVersion
	}
	types.NewChecker(tc, fset, r.Types, r.TypesInfo).Files(r.Syntax)
	r.IllTyped = len(r.Errors) > 0
}

// importCycle returns the roots on a cycle of imports among them, or nil.
func importCycle(roots []*packages.Package) []*packages.Package {
	const (
		white = iota
		grey
		black
	)
	color := map[*packages.Package]int{}
	isRoot := map[*packages.Package]bool{}
	for _, r := range roots {
		isRoot[r] = true
	}
	var stack []*packages.Package
	var visit func(p *packages.Package) []*packages.Package
	visit = func(p *packages.Package) []*packages.Package {
		color[p] = grey
		stack = append(stack, p)
		for _, imp := range p.Imports {
			if !isRoot[imp] {
				continue
			}
			switch color[imp] {
			case grey:
				for i, s := range stack {
					if s == imp {
						return append([]*packages.Package(nil), stack[i:]...)
					}
				}
			case white:
				if c := visit(imp); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[p] = black
		return nil
	}
	for _, r := range roots {
		if color[r] == white {
			if c := visit(r); c != nil {
				return c
			}
		}
	}
	return nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
