// Package schema finds the unique constraints a project declares for its tables: in the
// SQL of its migrations and schema files, in the SQL strings of Go migrations, and in ent
// schema files. ONCE005 reads them to tell a check-then-insert that a unique index makes
// safe (the losing insert fails with a unique violation) from one that makes duplicates.
//
// The files are found from a package's directory (see ForPackage): the nearest directory
// up to the module root (the nearest go.mod) whose own *.sql files or schema directories
// (named migrations, migration, migrate, db, schema or sql; their .sql and .go files)
// define tables, or else every *.sql file and schema directory of the module.
// Directories named vendor, testdata or node_modules, hidden ones and nested modules are
// skipped, and so are the migrations oncegen writes (their constraints belong to
// //once: declarations, which ONCE005 reads as such). Files and directories can also be
// named explicitly, relative to the module root. Walks are in lexical order and cached
// per directory for the run, so each file is read once and the result does not depend
// on which package asked first.
package schema

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/oncekit/once/analyzer/internal/sqltext"
)

// Unique is one unique constraint or index (or primary key) on a table.
type Unique struct {
	Table   string
	Columns []string
	Primary bool
	// Where holds it: "migrations/0003_users.sql:12".
	Where string
}

// Schema is the unique constraints of one module.
type Schema struct {
	Uniques []Unique
	defines bool // some file defines a table or a constraint
}

// Covers returns a unique constraint on table whose columns are all among keys (the
// columns a read compares): two rows that the read would both find agree on those
// columns, so the constraint refuses the second. When the read's columns are not known
// (keys is empty), any unique constraint but a primary key counts: it is there for the
// values the code looks up, not for a generated id.
func (s *Schema) Covers(table string, keys []string) (Unique, bool) {
	if s == nil {
		return Unique{}, false
	}
	for _, u := range s.Uniques {
		if !sameTable(u.Table, table) || len(u.Columns) == 0 {
			continue
		}
		if len(keys) == 0 {
			if !u.Primary {
				return u, true
			}
			continue
		}
		all := true
		for _, c := range u.Columns {
			all = all && slices.Contains(keys, c)
		}
		if all {
			return u, true
		}
	}
	return Unique{}, false
}

func sameTable(a, b string) bool { return sqltext.SameTable(a, b) }

// schemaDirs name the directories whose Go files may hold schema: migrations written in
// Go (goose, golang-migrate's Go drivers) and ent's schema package.
var schemaDirs = map[string]bool{"migrations": true, "migration": true, "migrate": true, "db": true, "schema": true, "sql": true}

// cache holds what has been read in this run: a directory's own schema ("level\x00dir"),
// a module's whole tree ("tree\x00root"), named files ("named\x00root\x00names").
var cache sync.Map

type load struct {
	once sync.Once
	s    *Schema
	err  error
}

func cached(key string, read func() (*Schema, error)) (*Schema, error) {
	v, _ := cache.LoadOrStore(key, new(load))
	l := v.(*load)
	l.once.Do(func() { l.s, l.err = read() })
	return l.s, l.err
}

// ForPackage returns the schema the package in directory dir sees, with the files and
// directories named (relative to the module root, or absolute). It is the nearest one:
// from dir up to the module root, the first directory whose own *.sql files, or the
// directories below it named migrations, migrate, db, schema or sql, define a table or a
// unique constraint; failing that, every *.sql file and schema directory of the module.
// So two apps of one module, each with its migrations, each see their own. A package
// of the Go root or the module cache (analysed only for facts) has none.
func ForPackage(dir string, named []string) (*Schema, error) {
	if dependency(dir) {
		return &Schema{}, nil
	}
	root := ModuleRoot(dir)
	var found *Schema
	for d := dir; ; d = filepath.Dir(d) {
		s, err := cached("level\x00"+d, func() (*Schema, error) { return readLevel(d) })
		if err != nil {
			return nil, err
		}
		if s.defines {
			found = s
			break
		}
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	if found == nil {
		s, err := cached("tree\x00"+root, func() (*Schema, error) { return readTree(root) })
		if err != nil {
			return nil, err
		}
		found = s
	}
	if len(named) == 0 {
		return found, nil
	}
	extra, err := cached("named\x00"+root+"\x00"+strings.Join(named, "\x00"), func() (*Schema, error) { return readNamed(root, named) })
	if err != nil {
		return nil, err
	}
	return &Schema{Uniques: append(slices.Clip(found.Uniques), extra.Uniques...), defines: true}, nil
}

// skipDir reports directories that hold no schema of this module.
func skipDir(path, root string, d fs.DirEntry) bool {
	if path == root {
		return false
	}
	name := d.Name()
	if name == "vendor" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil // another module
}

// readLevel reads the schema a directory holds itself: its own *.sql files, and the
// .sql and .go files of the directories below it named like schema directories
// (migrations/, db/migrations/, ent/schema/).
func readLevel(dir string) (*Schema, error) {
	s := &Schema{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if skipDir(path, dir, d) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		own := filepath.Dir(rel) == "."
		switch {
		case strings.HasSuffix(path, ".sql") && (own || inSchemaDir(rel)):
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !own && inSchemaDir(rel):
		default:
			return nil
		}
		return s.readFile(path, rel)
	})
	if err != nil {
		return nil, fmt.Errorf("schema: reading %s: %w", dir, err)
	}
	return s, nil
}

// readTree reads every *.sql file under root, and the Go files of its schema directories.
func readTree(root string) (*Schema, error) {
	s := &Schema{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner of the tree holds no schema we can use
		}
		if d.IsDir() {
			if skipDir(path, root, d) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.HasSuffix(path, ".sql"):
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && inSchemaDir(rel):
		default:
			return nil
		}
		return s.readFile(path, rel)
	})
	if err != nil {
		return nil, fmt.Errorf("schema: reading %s: %w", root, err)
	}
	return s, nil
}

// readNamed reads the files and directories named, relative to root.
func readNamed(root string, named []string) (*Schema, error) {
	s := &Schema{}
	for _, name := range named {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, name)
		}
		info, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		if !info.IsDir() {
			if err := s.readFile(path, name); err != nil {
				return nil, err
			}
			continue
		}
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("schema: %w", err)
			}
			if d.IsDir() || !(strings.HasSuffix(p, ".sql") || strings.HasSuffix(p, ".go")) {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			return s.readFile(p, rel)
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// maxFile bounds what is read of one file: a data dump is not a schema.
const maxFile = 8 << 20

func (s *Schema) readFile(path, rel string) error {
	info, err := os.Stat(path)
	if err != nil || info.Size() > maxFile {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	rel = filepath.ToSlash(rel)
	head := src[:min(len(src), 512)]
	if strings.Contains(string(head), "Generated by oncegen") {
		// The constraints of //once: ... table= declarations: ONCE005 reads the
		// declarations themselves, and a package that does not declare its table does
		// not lean on another's guard.
		return nil
	}
	var us []Unique
	if strings.HasSuffix(path, ".go") {
		us = ParseGo(rel, src)
	} else {
		us = ParseSQL(rel, string(src))
	}
	s.Uniques = append(s.Uniques, us...)
	s.defines = s.defines || len(us) > 0 || DefinesTable(string(src))
	return nil
}

func inSchemaDir(rel string) bool {
	parts := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
	for _, p := range parts {
		if schemaDirs[p] {
			return true
		}
	}
	return false
}

// ModuleRoot returns the nearest directory at or above dir holding a go.mod, or dir.
func ModuleRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// dependency reports a package directory in the Go root or the module cache.
func dependency(dir string) bool {
	if goroot := runtime.GOROOT(); goroot != "" && strings.HasPrefix(dir, filepath.Join(goroot, "src")+string(filepath.Separator)) {
		return true
	}
	return strings.Contains(filepath.ToSlash(dir), "/pkg/mod/")
}
