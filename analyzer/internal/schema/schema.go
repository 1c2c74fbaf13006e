// Package schema finds the unique constraints a project declares for its tables: in the
// SQL of its migrations and schema files, in the SQL strings of Go migrations, and in ent
// schema files. ONCE005 reads them to tell a check-then-insert that a unique index makes
// safe (the losing insert fails with a unique violation) from one that makes duplicates.
//
// The files are found from a package's directory: up to the nearest go.mod (the module
// root), then every *.sql file under it, and the .go files of directories named
// migrations, migration, migrate, db, schema or sql. Directories named vendor, testdata
// or node_modules, hidden ones and nested modules are skipped. Files and directories can
// also be named explicitly, relative to the module root. The walk is in lexical order and
// its result is cached per module root and list of names, so one run reads each file once
// and every package sees the same schema.
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

var loads sync.Map // root + "\x00" + names → *load

type load struct {
	once sync.Once
	s    *Schema
	err  error
}

// ForPackage returns the schema of the module holding the package directory dir, with
// the files and directories named (relative to the module root, or absolute). A package
// of the Go root or the module cache (analysed only for facts) has none.
func ForPackage(dir string, named []string) (*Schema, error) {
	if dependency(dir) {
		return &Schema{}, nil
	}
	return Load(ModuleRoot(dir), named)
}

// Load returns the schema found under root, with the files and directories named.
func Load(root string, named []string) (*Schema, error) {
	v, _ := loads.LoadOrStore(root+"\x00"+strings.Join(named, "\x00"), new(load))
	l := v.(*load)
	l.once.Do(func() { l.s, l.err = read(root, named) })
	return l.s, l.err
}

func read(root string, named []string) (*Schema, error) {
	s := &Schema{}
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner of the tree holds no schema we can use
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if name == "vendor" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
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
		seen[path] = true
		return s.readFile(path, rel)
	})
	if err != nil {
		return nil, fmt.Errorf("schema: reading %s: %w", root, err)
	}
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
			if !seen[path] {
				seen[path] = true
				if err := s.readFile(path, name); err != nil {
					return nil, err
				}
			}
			continue
		}
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("schema: %w", err)
			}
			if d.IsDir() || seen[p] || !(strings.HasSuffix(p, ".sql") || strings.HasSuffix(p, ".go")) {
				return nil
			}
			seen[p] = true
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
	if strings.HasSuffix(path, ".go") {
		s.Uniques = append(s.Uniques, ParseGo(rel, src)...)
		return nil
	}
	s.Uniques = append(s.Uniques, ParseSQL(rel, string(src))...)
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
