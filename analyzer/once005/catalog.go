package once005

import (
	_ "embed"
	"encoding/json"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"github.com/oncekit/once/analyzer/internal/sqlfacts"
)

// catalogJSON is what sends SQL, by identity: see its doc.
//
//go:embed catalog.json
var catalogJSON []byte

// end is what a call ending a statement sends (see the catalogue's doc; -1 for none).
type end struct {
	kind               sqlfacts.Kind
	flags              uint8
	arg, conds, handle int
}

// An end's flags (see the catalogue's doc).
const (
	fAbsent uint8 = 1 << iota
	fExists
	fCount
	fSum
	fText
	fSetCol
	fByID
	fBuilt
)

// An orm is a library: its types, or its generator's package, and its ends.
type orm struct {
	name, generated, hint string
	plural                bool
	types, checks         map[string]bool
	ends                  map[string]end
}

// The catalogue, read once. Its test checks it reads whole.
var (
	libraries    []*orm
	libraryPaths map[string]bool   // the packages a package that may send SQL imports
	rowsNext     map[string]bool   // Next methods whose true says a row came back
	pure         map[string]bool   // packages whose functions give the same result for the same input
	serializable map[string]bool   // isolation levels that serialise a transaction
	tableMethods map[string]bool   // the method a model declares to name its table
	linkRoles    map[string]string // a builder's shaping method, by the role it plays
	clauseRoles  map[string]string // a clause type, by the role it plays
	parts        map[string]string // a query builder's method, by the part it writes
	renders      map[string]bool   // a query builder's methods returning its text
	duplicate    []string          // what code handling a unique violation names
)

func init() {
	var c struct {
		Libraries []struct {
			Name, Generated, Hint string
			Plural                bool
			Types, Checks         []string
			Ends                  map[string]string
		}
		Rows, Pure, Serializable, Duplicate, TableMethods, Renders []string
		Links, Clauses, Parts                                      map[string]string
	}
	_ = json.Unmarshal(catalogJSON, &c)
	libraryPaths = map[string]bool{}
	for _, l := range c.Libraries {
		o := &orm{name: l.Name, generated: l.Generated, hint: l.Hint, plural: l.Plural, types: set(l.Types...), checks: set(l.Checks...), ends: map[string]end{}}
		for key, spec := range l.Ends {
			e := end{arg: -1, conds: -1, handle: -1}
			ints := map[string]*int{"arg": &e.arg, "conds": &e.conds, "handle": &e.handle}
			for _, w := range strings.Fields(spec) {
				k, v, _ := strings.Cut(w, "=")
				switch flag := slices.Index([]string{"absent", "exists", "count", "sum", "text", "setcol", "byid", "built"}, k); {
				case ints[k] != nil:
					*ints[k], _ = strconv.Atoi(v)
				case flag >= 0:
					e.flags |= 1 << flag
				default:
					e.kind = sqlfacts.Kind(slices.Index([]string{"", "read", "insert", "update", "delete"}, k))
				}
			}
			o.ends[key] = e
		}
		for _, t := range append(l.Types, l.Generated+".") {
			libraryPaths[t[:strings.LastIndexByte(t, '.')]] = true
		}
		libraries = append(libraries, o)
	}
	delete(libraryPaths, "")
	rowsNext, pure, serializable, tableMethods, renders = set(c.Rows...), set(c.Pure...), set(c.Serializable...), set(c.TableMethods...), set(c.Renders...)
	linkRoles, clauseRoles, parts, duplicate = c.Links, c.Clauses, c.Parts, c.Duplicate
}

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// library returns the library of type t, and the key of method's end: the method,
// "Type.Method", or "Suffix.Method" for a generated builder (UserQuery's Exist).
func (r *reader) library(t *types.Named, method string) (*orm, string) {
	name := t.Obj().Name()
	for _, lib := range libraries {
		if lib.types[t.Obj().Pkg().Path()+"."+name] {
			if _, ok := lib.ends[name+"."+method]; ok {
				return lib, name + "." + method
			}
			return lib, method
		}
		if lib.generated != "" && r.generatedBy(t.Obj().Pkg(), lib.generated) {
			for k := range lib.ends {
				if suffix, m, _ := strings.Cut(k, "."); m == strings.TrimSuffix(method, "X") && strings.HasSuffix(name, suffix) && name != suffix {
					return lib, k
				}
			}
			return lib, ""
		}
	}
	return nil, ""
}

// generatedCheck reports a function a generator wrote (ent's IsConstraintError) that
// handles a unique violation.
func (r *reader) generatedCheck(obj types.Object) bool {
	return slices.ContainsFunc(libraries, func(lib *orm) bool { return lib.checks[obj.Name()] && r.generatedBy(obj.Pkg(), lib.generated) })
}

// generatedBy reports a package importing a generator's (ent's): its builders are read
// by the names the generator gives them.
func (r *reader) generatedBy(p *types.Package, path string) bool {
	return p != r.pass.Pkg && slices.ContainsFunc(p.Imports(), func(i *types.Package) bool { return i.Path() == path })
}
