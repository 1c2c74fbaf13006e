package sqlfacts

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Schema is the unique constraints a package can see.
type Schema struct {
	Uniques []Unique
	defines bool // some file read defines a table or a constraint
}

// Covers returns a unique constraint on table whose columns are all among cols: two
// rows that agree on cols agree on it, so the constraint refuses the second. With cols
// unknown (empty), any constraint but a primary key counts: it is there for the values
// code looks up, not for a generated id.
func Covers(uniques []Unique, table string, cols []string) (Unique, bool) {
	for _, u := range uniques {
		if !SameTable(u.Table, table) || len(u.Columns) == 0 || (len(cols) == 0 && u.Primary) {
			continue
		}
		all := true
		for _, c := range u.Columns {
			all = all && (len(cols) == 0 || slices.Contains(cols, c))
		}
		if all {
			return u, true
		}
	}
	return Unique{}, false
}

// schemaDirs name the directories whose files hold a project's schema: SQL and
// migrations written in Go (goose, golang-migrate), and ent's schema package.
var schemaDirs = map[string]bool{"migrations": true, "migration": true, "migrate": true, "db": true, "schema": true, "sql": true}

// cache holds what this run has read: a directory's own schema, a module's whole tree,
// the files named. Each file is read once and the result does not depend on which
// package asked first.
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

// ForDir returns the schema the package in directory dir sees, with the files and
// directories named (relative to the module root, or absolute). It is the nearest one:
// from dir up to the module root (the nearest go.mod), the first directory whose own
// .sql and .go files, or the directories below it named migrations, migration,
// migrate, db, schema or sql, define a table or a constraint; failing that, every .sql
// and .go file of the module. So two apps of one module, each with its migrations,
// each see their own. vendor, testdata, hidden directories, nested modules and the
// migrations oncegen writes (their constraints belong to //once: declarations, which
// count where they are declared) are skipped. A package of the Go root or the module
// cache has none.
func ForDir(dir string, named []string) (*Schema, error) {
	if goroot := runtime.GOROOT(); (goroot != "" && strings.HasPrefix(dir, filepath.Join(goroot, "src")+string(filepath.Separator))) ||
		strings.Contains(filepath.ToSlash(dir), "/pkg/mod/") {
		return &Schema{}, nil
	}
	root := moduleRoot(dir)
	var found *Schema
	for d := dir; found == nil; d = filepath.Dir(d) {
		s, err := cached("level\x00"+d, func() (*Schema, error) { return walk(d, false) })
		if err != nil {
			return nil, err
		}
		if s.defines {
			found = s
		}
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	if found == nil {
		s, err := cached("tree\x00"+root, func() (*Schema, error) { return walk(root, true) })
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

// walk reads dir's own files and those of its schema directories, or with all, every
// file of the tree.
func walk(dir string, all bool) (*Schema, error) {
	s := &Schema{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner holds no schema we can use
		}
		if d.IsDir() {
			name := d.Name()
			if path != dir && (name == "vendor" || name == "testdata" || name == "node_modules" || name[0] == '.' || name[0] == '_' || exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if (strings.HasSuffix(path, ".sql") || strings.HasSuffix(path, ".go")) && (all || filepath.Dir(rel) == "." || inSchemaDir(rel)) {
			return s.read(path, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the schema under %s: %w", dir, err)
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
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("schema file %s: %w", name, err)
		}
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			return s.read(p, filepath.ToSlash(rel))
		})
		if err != nil {
			return nil, fmt.Errorf("schema file %s: %w", name, err)
		}
	}
	return s, nil
}

// maxFile bounds what is read of one file: a data dump is not a schema.
const maxFile = 8 << 20

// read adds the constraints of one file: Go source (tests aside), or else SQL.
func (s *Schema) read(path, rel string) error {
	goFile := strings.HasSuffix(path, ".go")
	if strings.HasSuffix(path, "_test.go") {
		return nil
	}
	if info, err := os.Stat(path); err != nil || info.Size() > maxFile {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("schema file %s: %w", rel, err)
	}
	low := bytes.ToLower(src)
	if bytes.Contains(low[:min(len(low), 512)], []byte("generated by oncegen")) {
		return nil
	}
	if !bytes.Contains(low, []byte("unique")) && !bytes.Contains(low, []byte("primary key")) && !bytes.Contains(low, []byte("create table")) {
		return nil
	}
	var us []Unique
	if goFile {
		us = ParseGo(rel, src)
	} else {
		us = ParseDDL(rel, string(src))
	}
	s.Uniques = append(s.Uniques, us...)
	s.defines = s.defines || len(us) > 0 || DefinesTable(string(src))
	return nil
}

func inSchemaDir(rel string) bool {
	for _, p := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		if schemaDirs[p] {
			return true
		}
	}
	return false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// moduleRoot returns the nearest directory at or above dir holding a go.mod, or dir.
func moduleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, "go.mod")) {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
