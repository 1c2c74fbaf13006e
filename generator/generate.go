package generator

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/internal/directive"
)

// Guard is one declared promise, resolved against its package.
type Guard struct {
	*directive.Directive
	// PkgPath and PkgName are the package the guarded function is in; Dir its directory.
	PkgPath string
	PkgName string
	Dir     string
	// File is the path of the file the directive is in.
	File string
}

// Wrapper is the generated wrapper's name as a caller writes it: FOnce, or T.FOnce for a
// method.
func (g *Guard) Wrapper() string {
	w := directive.WrapperName(g.Func.Name.Name)
	if t := recvName(g); t != "" {
		return t + "." + w
	}
	return w
}

func recvName(g *Guard) string {
	full := g.FuncName()
	if i := strings.LastIndex(full, "."); i >= 0 {
		return full[:i]
	}
	return ""
}

// KeyText is the key as declared: the key= expressions, or the table's key columns.
func (g *Guard) KeyText() string {
	if g.HasTable() {
		return strings.Join(g.Columns, ", ")
	}
	parts := make([]string, len(g.Key))
	for i, k := range g.Key {
		parts[i] = k.Text
	}
	return strings.Join(parts, ", ")
}

// Errors is every mistake found in one generation, sorted by position; it prints one
// file:line:col: message per line.
type Errors []*directive.Error

// Error prints one mistake per line, file:line:col: message.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Result is what one generation produces, before anything is written.
type Result struct {
	// Files maps the path of each package's generated file to its bytes.
	Files map[string][]byte
	// Orphans are files carrying Header that no directive produces any more.
	Orphans []string
	// Guards are every declared promise, by package path, file and line.
	Guards []*Guard
}

// Generate validates the directives of pkgs and renders their wrappers. On any mistake it
// returns Errors, listing them all, and no files.
func Generate(pkgs []*packages.Package) (*Result, error) {
	pkgs = append([]*packages.Package(nil), pkgs...)
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].PkgPath < pkgs[j].PkgPath })
	res := &Result{Files: map[string][]byte{}}
	var errs Errors
	type job struct {
		pkg   *packages.Package
		plans []*plan
		objs  []Object
		out   string
		src   []byte
		err   error
	}
	var jobs []*job
	for _, pkg := range pkgs {
		dir := pkgDir(pkg)
		if dir == "" {
			continue
		}
		// Validation is sequential: go/types is not promised safe for concurrent use.
		c := &checker{fset: pkg.Fset, pkg: pkg.Types, info: pkg.TypesInfo}
		j := &job{pkg: pkg, out: filepath.Join(dir, FileName)}
		for _, f := range sortedFiles(pkg) {
			ds, derrs := directive.ParseFile(pkg.Fset, f)
			errs = append(errs, derrs...)
			for _, d := range ds {
				g := &Guard{Directive: d, PkgPath: pkg.PkgPath, PkgName: pkg.Name, Dir: dir, File: d.Position.Filename}
				res.Guards = append(res.Guards, g)
				if p := c.plan(g); p != nil {
					j.plans = append(j.plans, p)
				}
			}
		}
		errs = append(errs, c.errs...)
		guards := make([]*Guard, len(j.plans))
		for i, p := range j.plans {
			guards[i] = p.g
		}
		objs, err := tableObjects(guards)
		var derr *directive.Error
		switch {
		case errors.As(err, &derr):
			errs = append(errs, derr)
		case err != nil:
			return nil, err
		}
		j.objs = objs
		jobs = append(jobs, j)
	}
	errs = append(errs, duplicateNames(res.Guards)...)
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return before(errs[i].Position, errs[j].Position) })
		return nil, errs
	}

	// Rendering (jennifer, then gofmt) is most of the work: one package per core.
	std := stdPackages(pkgs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		if len(j.plans) == 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			j.src, j.err = render(j.pkg, j.plans, j.objs, std)
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return nil, j.err
		}
		if j.src != nil {
			res.Files[j.out] = j.src
		}
	}
	if err := checkTypeErrors(pkgs, res.Files); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		existing, err := generatedFiles(filepath.Dir(j.out))
		if err != nil {
			return nil, err
		}
		for _, path := range existing {
			if _, ok := res.Files[path]; !ok {
				res.Orphans = append(res.Orphans, path)
			}
		}
	}
	sort.Strings(res.Orphans)
	return res, nil
}

// pendingNames are the names that the generated files of pkgs' dependencies in the main
// module would declare: a package may use a dependency's wrapper before the dependency's
// own generation has written it (a new directive) or while its stale file is set aside (a
// dependency whose compile failed is type-checked from source, its generated file read as
// empty: see Load). go generate runs each package's line in turn, and may come to the
// dependency after the package that imports it. The names come from the dependencies'
// directives, read from their files: only packages of the main module, and only when a
// type error asks (see checkTypeErrors).
func pendingNames(roots []*packages.Package) map[string]bool {
	names := map[string]bool{}
	isRoot := map[*packages.Package]bool{}
	for _, p := range roots {
		isRoot[p] = true
	}
	fset := token.NewFileSet()
	packages.Visit(roots, nil, func(p *packages.Package) {
		if isRoot[p] || p.Module == nil || !p.Module.Main {
			return
		}
		for _, name := range p.GoFiles {
			src, err := os.ReadFile(name)
			if err != nil || IsGenerated(src) || !bytes.Contains(src, []byte(directive.Prefix)) {
				continue // a file that cannot be read is the dependency's own load's to report
			}
			f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			ds, _ := directive.ParseFile(fset, f)
			for _, d := range ds {
				fn := d.Func.Name.Name
				names[directive.WrapperName(fn)] = true
				if d.HasTable() {
					names[directive.ConflictName(fn)] = true
				} else if d.Spec().Rearm {
					names[directive.RearmName(fn)] = true
				}
			}
		}
	})
	return names
}

// duplicateNames reports two guards sharing a stored name: they would share one history.
func duplicateNames(gs []*Guard) Errors {
	var errs Errors
	first := map[string]*Guard{}
	for _, g := range gs {
		if prev, ok := first[g.Name]; ok {
			errs = append(errs, &directive.Error{Pos: g.Slash, Position: g.Position,
				Msg: fmt.Sprintf("guard name %q is also the name of %s.%s (%s:%d): two guards would share one history; give one a different name=",
					g.Name, prev.PkgName, prev.FuncName(), filepath.Base(prev.Position.Filename), prev.Position.Line)})
			continue
		}
		first[g.Name] = g
	}
	return errs
}

// sortedFiles returns pkg's syntax trees by file name, so the output does not depend on the
// order the go command listed them in.
func sortedFiles(pkg *packages.Package) []*ast.File {
	files := append([]*ast.File(nil), pkg.Syntax...)
	sort.Slice(files, func(i, j int) bool {
		return pkg.Fset.File(files[i].Pos()).Name() < pkg.Fset.File(files[j].Pos()).Name()
	})
	return files
}

func pkgDir(pkg *packages.Package) string {
	for _, list := range [][]string{pkg.GoFiles, pkg.CompiledGoFiles, pkg.OtherFiles} {
		if len(list) > 0 {
			return filepath.Dir(list[0])
		}
	}
	return ""
}

// Write writes res's files whose bytes differ from what is on disk and removes its orphans.
// It returns the paths it changed.
func Write(res *Result) ([]string, error) {
	var changed []string
	paths := make([]string, 0, len(res.Files))
	for p := range res.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		src := res.Files[path]
		if old, err := os.ReadFile(path); err == nil && string(old) == string(src) {
			continue
		}
		if err := writeFileAtomic(path, src); err != nil {
			return changed, err
		}
		changed = append(changed, path)
	}
	for _, path := range res.Orphans {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return changed, fmt.Errorf("removing %s: %w", path, err)
		}
		changed = append(changed, path)
	}
	return changed, nil
}

// writeFileAtomic replaces path by a fully written file, so a reader (or a crash) never sees
// half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".oncegen-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// position is a guard's place as file:line, relative to base when it is inside it.
func position(p token.Position, base string) string {
	name := p.Filename
	if base != "" {
		if rel, err := filepath.Rel(base, name); err == nil && !strings.HasPrefix(rel, "..") {
			name = filepath.ToSlash(rel)
		}
	}
	return fmt.Sprintf("%s:%d", name, p.Line)
}

// Stale is a generated file whose bytes on disk are not what generation produces: stale,
// missing (Old nil) or orphaned (New nil).
type Stale struct {
	Path     string
	Old, New []byte
}

// Stale lists res's files that differ from the disk and its orphans, by path.
func (res *Result) Stale() ([]Stale, error) {
	var out []Stale
	for path, src := range res.Files {
		old, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if string(old) != string(src) {
			out = append(out, Stale{Path: path, Old: old, New: src})
		}
	}
	for _, path := range res.Orphans {
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		out = append(out, Stale{Path: path, Old: old})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// WriteMigrations writes files (paths relative to dir: names in it, and once's own steps in
// Options.OnceDir), creating directories as needed. Migration files are never overwritten:
// one that exists already is an error, reported before anything is written. (A new file
// cannot have an existing name: its version follows every file's in its directory.)
func WriteMigrations(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if base := filepath.Base(n); base == SnapshotFile || base == atlasSumFile {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return fmt.Errorf("migration %s exists already: not overwriting it", filepath.Join(dir, n))
		}
	}
	for _, n := range names {
		path := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
		}
		if err := writeFileAtomic(path, files[n]); err != nil {
			return err
		}
	}
	return nil
}

// TypeErrors are type errors in the loaded packages that the generated files do not
// account for: a package that does not type-check gets nothing written.
type TypeErrors []string

// Error lists the first errors, one per line, and says how many there were.
func (es TypeErrors) Error() string {
	const first = 10
	lines := es
	if len(lines) > first {
		lines = lines[:first]
	}
	msg := strings.Join(lines, "\n")
	if len(es) > first {
		msg += fmt.Sprintf("\n(and %d more)", len(es)-first)
	}
	return msg + "\nthe packages do not type-check (apart from uses of what oncegen is about to generate): fix these first"
}

// undefinedRE finds the name a type error says is missing: "undefined: F", "undefined:
// pkg.F", "x.F undefined (type T has no field or method F)".
var undefinedRE = regexp.MustCompile(`undefined: (?:\w+\.)?(\w+)|has no field or method (\w+)`)

// checkTypeErrors returns the type errors of pkgs that are not a use of a name declared by
// one of the generated files: code that calls a wrapper or uses a conflict constant before
// it is generated (or while its stale file is set aside, see Load) is expected not to
// type-check, and anything else means the package is broken.
//
// Only the type-check made here counts, the one that read each generated file as empty. The
// go command's own compile of a package (made for export data, and reported as an error of
// the package headed "# path") read the stale file as it is, so it fails exactly when a
// guarded function was renamed or changed its signature: the case regeneration is for.
func checkTypeErrors(pkgs []*packages.Package, files map[string][]byte) error {
	var msgs []string
	for _, pkg := range pkgs {
		for _, e := range pkg.Errors {
			if e.Kind == packages.ListError && strings.HasPrefix(strings.TrimSpace(e.Msg), "# ") {
				continue // the go command's compile, with the stale file
			}
			for _, line := range strings.Split(e.Error(), "\n") {
				line = strings.TrimPrefix(strings.TrimSpace(line), "-: ") // a go list error has no position of its own
				// The go command's compile of a package stops at ten errors with "too many
				// errors"; the type check from source lists them all.
				if line == "" || strings.HasPrefix(line, "# ") || strings.HasSuffix(line, ": too many errors") {
					continue
				}
				msgs = append(msgs, line)
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	declared := map[string]bool{}
	for _, src := range files {
		f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing a generated file: %w", err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				declared[d.Name.Name] = true
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							declared[n.Name] = true
						}
					case *ast.TypeSpec:
						declared[sp.Name.Name] = true
					}
				}
			}
		}
	}
	var bad TypeErrors
	var pending map[string]bool
	for _, m := range msgs {
		sub := undefinedRE.FindStringSubmatch(m)
		if sub == nil {
			bad = append(bad, m)
			continue
		}
		if declared[sub[1]] || declared[sub[2]] {
			continue
		}
		if pending == nil {
			pending = pendingNames(pkgs)
		}
		if !pending[sub[1]] && !pending[sub[2]] {
			bad = append(bad, m)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return bad[:len(dedupe(bad))]
}
