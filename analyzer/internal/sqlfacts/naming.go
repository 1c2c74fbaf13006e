package sqlfacts

import (
	"go/types"
	"reflect"
	"strings"
	"unicode"
)

// Snake converts a Go name to snake case as the ORMs do, keeping initialisms whole:
// UserID is user_id, APIKey is api_key.
func Snake(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				(unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TableOf names a model type's table by the ORMs' default rule: the type's name in
// snake case, its last word plural for gorm, bun and ent (APIKey is api_keys), singular
// for xorm.
func TableOf(typeName string, plural bool) string {
	s := Snake(typeName)
	if !plural {
		return s
	}
	i := strings.LastIndexByte(s, '_') + 1
	w := s[i:]
	switch {
	case w == "person":
		w = "people"
	case w == "child":
		w = "children"
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"), strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		w += "es"
	case len(w) > 1 && strings.HasSuffix(w, "y") && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		w = w[:len(w)-1] + "ies"
	default:
		w += "s"
	}
	return s[:i] + w
}

// tagItems returns the items of an ORM's struct tag: gorm's are separated by
// semicolons, bun's by commas, xorm's by spaces.
func tagItems(tag, orm string) []string {
	v := reflect.StructTag(tag).Get(orm)
	switch orm {
	case "gorm":
		return strings.Split(v, ";")
	case "bun":
		return strings.Split(v, ",")
	}
	return strings.Fields(v)
}

// Column names the column a model's field maps to: its gorm column:, bun first item or
// xorm quoted word, or the field's name in snake case.
func Column(field, tag string) string {
	col := Snake(field)
	for _, it := range tagItems(tag, "gorm") {
		if k, v, _ := strings.Cut(strings.TrimSpace(it), ":"); strings.EqualFold(k, "column") && v != "" {
			col = strings.ToLower(v)
		}
	}
	if b := tagItems(tag, "bun"); b[0] != "" && !strings.Contains(b[0], ":") {
		col = strings.ToLower(strings.TrimSpace(b[0]))
	}
	words := tagItems(tag, "xorm")
	for i, w := range words {
		if strings.HasPrefix(w, "'") && len(w) > 2 && (i == 0 || !strings.EqualFold(words[i-1], "default")) {
			col = strings.ToLower(strings.Trim(w, "'"))
		}
	}
	return col
}

// TagUniques returns the unique column sets a model's struct tags declare: gorm's
// uniqueIndex and unique, bun's unique, xorm's unique (fields of one named group make
// one set), and its primary key (gorm's primaryKey, bun's and xorm's pk, or else the ID
// field by convention).
func TagUniques(table string, st *types.Struct) []Unique {
	var out []Unique
	group := map[string]int{}
	gen := false // the field being read is filled by the database
	add := func(name, col string, primary bool) {
		if i, ok := group[name]; ok && name != "" {
			out[i].Columns = append(out[i].Columns, col)
			out[i].Generated = out[i].Generated || gen
			return
		}
		if name != "" {
			group[name] = len(out)
		}
		out = append(out, Unique{Table: table, Columns: []string{col}, Primary: primary, Generated: primary && gen, Where: "the model's tags"})
	}
	tagged, id, idInt := false, "", false
	for i := range st.NumFields() {
		f, tag := st.Field(i), st.Tag(i)
		col := Column(f.Name(), tag)
		if f.Name() == "ID" || f.Name() == "Id" {
			id, idInt = col, isInt(f.Type())
		}
		low := strings.ToLower(tag)
		gen = strings.Contains(low, "autoincr") && !strings.Contains(low, "autoincrement:false") || strings.Contains(low, "identity") ||
			strings.Contains(low, "default") || isInt(f.Type()) && strings.Contains(low, "gorm:") && strings.Contains(low, "primar") // gorm numbers an integer key
		for _, it := range tagItems(tag, "gorm") {
			k, v, _ := strings.Cut(strings.TrimSpace(it), ":")
			switch strings.ToLower(k) {
			case "uniqueindex":
				name, _, _ := strings.Cut(v, ",")
				add("gorm:"+name, col, false)
			case "unique":
				add("", col, false)
			case "primarykey", "primary_key":
				add("pk", col, true)
			}
			tagged = tagged || k != ""
		}
		for j, it := range tagItems(tag, "bun") {
			k, v, _ := strings.Cut(strings.TrimSpace(it), ":")
			switch {
			case j == 0:
			case k == "unique" && v == "":
				add("", col, false)
			case k == "unique":
				add("bun:"+v, col, false)
			case k == "pk":
				add("pk", col, true)
			}
			tagged = tagged || it != ""
		}
		for _, w := range tagItems(tag, "xorm") {
			lw := strings.ToLower(w)
			switch {
			case lw == "unique":
				add("", col, false)
			case strings.HasPrefix(lw, "unique("):
				add("xorm:"+strings.TrimSuffix(lw[len("unique("):], ")"), col, false)
			case lw == "pk":
				add("pk", col, true)
			}
			tagged = true
		}
	}
	if _, ok := group["pk"]; !ok && tagged && id != "" {
		out = append(out, Unique{Table: table, Columns: []string{id}, Primary: true, Generated: idInt, Where: "the model's ID field"})
	}
	return out
}

func isInt(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}
