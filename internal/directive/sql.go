package directive

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
)

// MaxIdentLen is PostgreSQL's longest identifier, in bytes (NAMEDATALEN-1).
const MaxIdentLen = 63

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// nonUnreserved holds PostgreSQL 15's keywords that are not unreserved: as a column or table
// name, each must be quoted, and pg_get_indexdef would print it quoted, so the emitted DDL
// would no longer round-trip. (SELECT word FROM pg_get_keywords() WHERE catcode <> 'U'.)
var nonUnreserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization between bigint binary bit boolean both case cast char character check coalesce collate collation column concurrently constraint create cross current_catalog current_date current_role current_schema current_time current_timestamp current_user dec decimal default deferrable desc distinct do else end except exists extract false fetch float for foreign freeze from full grant greatest group grouping having ilike in initially inner inout int integer intersect interval into is isnull join lateral leading least left like limit localtime localtimestamp national natural nchar none normalize not notnull null nullif numeric offset on only or order out outer overlaps overlay placing position precision primary real references returning right row select session_user setof similar smallint some substring symmetric table tablesample then time timestamp to trailing treat trim true union unique user using values varchar variadic verbose when where window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable`) {
		nonUnreserved[w] = true
	}
}

// checkIdent returns why s is not a plain SQL identifier, or "".
func checkIdent(s string) string {
	switch {
	case len(s) > MaxIdentLen:
		return fmt.Sprintf("an identifier is at most %d bytes", MaxIdentLen)
	case !identRE.MatchString(s):
		return "not a plain SQL identifier (lower-case letters, digits and _, not starting with a digit)"
	case nonUnreserved[s]:
		return "a PostgreSQL keyword: rename the column, or it must be quoted everywhere"
	}
	return ""
}

// checkTable returns why s is not a table name: an identifier, maybe schema-qualified.
func checkTable(s string) string {
	schema, rel, qualified := strings.Cut(s, ".")
	if qualified {
		if msg := checkIdent(schema); msg != "" {
			return "schema " + msg
		}
		return checkIdent(rel)
	}
	return checkIdent(s)
}

// QualifiedTable is the table as PostgreSQL prints it in an index definition: schema-qualified,
// public by default.
func (d *Directive) QualifiedTable() string {
	if strings.Contains(d.Table, ".") {
		return d.Table
	}
	return "public." + d.Table
}

// relation is the table's name without its schema: how an ON CONFLICT clause refers to it.
func (d *Directive) relation() string {
	_, rel, ok := strings.Cut(d.Table, ".")
	if ok {
		return rel
	}
	return d.Table
}

// IndexName is the name of the unique index a table= form relies on:
// <table>_<columns>_once_<kind>, shortened with a stable hash to fit in 63 bytes.
func (d *Directive) IndexName() string {
	return ShortName(d.relation() + "_" + strings.Join(d.Columns, "_") + "_once_" + string(d.Kind))
}

// CheckName is the name of a statement's CHECK constraint on its counter column.
func (d *Directive) CheckName() string {
	return ShortName(d.relation() + "_" + d.Counter + "_once_check")
}

// CapName is the name of a statement's CHECK constraint bounding its counter by the cap.
func (d *Directive) CapName() string {
	return ShortName(d.relation() + "_" + d.Counter + "_once_cap")
}

// CapDef is that constraint as pg_get_constraintdef prints it. The conflict clause keeps an
// existing row within the cap; this keeps a key's first insert, which creates the row and
// meets no conflict, within it too. "" but for a table= form with a counter column.
func (d *Directive) CapDef() string {
	if !d.HasTable() || d.Counter == "" {
		return ""
	}
	return fmt.Sprintf("CHECK ((%s <= %d))", d.Counter, d.Cap.Lit)
}

// ShortName returns name when it fits in an identifier, else its first bytes and an 8-digit
// hash of the whole, so two long names that share a beginning stay distinct, and the same
// name always shortens the same way.
func ShortName(name string) string {
	if len(name) <= MaxIdentLen {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%s_%08x", strings.TrimRight(name[:MaxIdentLen-9], "_"), h.Sum32())
}

// IndexPredicate is the partial-index predicate of a table= form whose index is partial
// (open's), as pg_get_indexdef prints it (without the surrounding WHERE), or "".
func (d *Directive) IndexPredicate() string {
	t := d.tableForm()
	if t == nil || t.Predicate == nil {
		return ""
	}
	return t.Predicate(d)
}

// TableColumns are the columns of the table a table= form relies on beyond its key
// columns (a latch, a counter); none without table=.
func (d *Directive) TableColumns() []Column {
	if t := d.tableForm(); t != nil && t.Columns != nil {
		return t.Columns(d)
	}
	return nil
}

// TableChecks are the CHECK constraints a table= form adds; none without table=.
func (d *Directive) TableChecks() []Check {
	if t := d.tableForm(); t != nil && t.Checks != nil {
		return t.Checks(d)
	}
	return nil
}

// tableForm is the table= form d uses, or nil without table= (or for an unknown kind).
func (d *Directive) tableForm() *TableForm {
	if !d.HasTable() {
		return nil
	}
	if s := d.Spec(); s != nil {
		return s.Table
	}
	return nil
}

// IndexDef is the unique index of a table= form, in the words pg_get_indexdef returns for
// it, so a live index can be compared with it as text. "" without table=.
func (d *Directive) IndexDef() string {
	if !d.HasTable() {
		return ""
	}
	def := fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s USING btree (%s)", d.IndexName(), d.QualifiedTable(), strings.Join(d.Columns, ", "))
	if d.NullsNotDistinct {
		def += " NULLS NOT DISTINCT"
	}
	if p := d.IndexPredicate(); p != "" {
		def += " WHERE " + p
	}
	return def
}

// DuplicatesQuery is the query that lists the keys a table= form's table already holds more
// than once among the rows its unique index covers, with how many rows hold each: the keys
// that stop the index's build. The rows covered are those the index's predicate admits
// and, unless NULLS NOT DISTINCT, whose key columns are all non-null (rows with a null in
// the key never conflict). "" without table=.
func (d *Directive) DuplicatesQuery() string {
	if !d.HasTable() {
		return ""
	}
	cols := strings.Join(d.Columns, ", ")
	var where []string
	if p := d.IndexPredicate(); p != "" {
		where = append(where, p)
	}
	if !d.NullsNotDistinct {
		for _, c := range d.Columns {
			where = append(where, c+" IS NOT NULL")
		}
	}
	q := "SELECT " + cols + ", count(*) FROM " + d.QualifiedTable()
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " GROUP BY " + cols + " HAVING count(*) > 1;"
}

// ConflictClause is the ON CONFLICT clause the function's INSERT must use in a table= form:
// its target and predicate match the index text for text, so PostgreSQL infers that index
// (a bound parameter in the predicate fails with 42P10 once the plan goes generic); what
// follows the target is the kind's (TableForm.Conflict). "" without table=.
func (d *Directive) ConflictClause() string {
	t := d.tableForm()
	if t == nil {
		return ""
	}
	return "ON CONFLICT (" + strings.Join(d.Columns, ", ") + ") " + t.Conflict(d)
}
