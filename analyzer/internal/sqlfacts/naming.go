package sqlfacts

import (
	"cmp"
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
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) || unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// BuilderTable names the table a generated builder writes: ent names a builder after its
// schema type and what it builds (UserCreate, UserUpsertOne), and the table after the type.
func BuilderTable(builder, suffix string) string {
	return TableOf(strings.TrimSuffix(builder, suffix), true)
}

// TableOf names a model's table as the ORMs do: snake case, the last word plural
// (gorm, bun, ent) or not (xorm).
func TableOf(typeName string, plural bool) string {
	s := Snake(typeName)
	i := strings.LastIndexByte(s, '_') + 1
	switch w := s[i:]; {
	case !plural:
		return s
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "z"), strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		return s + "es"
	case len(w) > 1 && w[len(w)-1] == 'y' && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// tagItems returns the items of an ORM's struct tag: gorm's are separated by
// semicolons, bun's by commas, xorm's by spaces.
func tagItems(tag, orm string) []string {
	v := reflect.StructTag(tag).Get(orm)
	if orm == "xorm" {
		return strings.Fields(v)
	}
	return strings.Split(v, map[string]string{"gorm": ";", "bun": ","}[orm])
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
	if b := strings.TrimSpace(tagItems(tag, "bun")[0]); b != "" && !strings.Contains(b, ":") {
		col = strings.ToLower(b)
	}
	words := tagItems(tag, "xorm")
	for i, w := range words {
		if strings.HasPrefix(w, "'") && len(w) > 2 && (i == 0 || !strings.EqualFold(words[i-1], "default")) {
			col = strings.ToLower(strings.Trim(w, "'"))
		}
	}
	return col
}

// TagUniques returns the unique sets (a named group's fields make one) and primary key
// (or the ID field, by convention) a model's gorm, bun and xorm tags declare.
func TagUniques(table string, st *types.Struct) []Unique {
	var out []Unique
	group := map[string]int{}
	tagged, id, idInt := false, "", false
	fs, tags := flat(st)
	for i, f := range fs {
		tag := tags[i]
		col, low := Column(f.Name(), tag), strings.ToLower(tag)
		b, _ := f.Type().Underlying().(*types.Basic)
		isInt := b != nil && b.Info()&types.IsInteger != 0
		if f.Name() == "ID" || f.Name() == "Id" {
			id, idInt = col, isInt
		}
		gen := strings.Contains(low, "autoincr") && !strings.Contains(low, "autoincrement:false") || strings.Contains(low, "identity") ||
			strings.Contains(low, "default") || isInt && strings.Contains(low, "gorm:") && strings.Contains(low, "primar")
		add := func(name string, primary bool) {
			if i, ok := group[name]; ok {
				out[i].Columns, out[i].Generated = append(out[i].Columns, col), out[i].Generated || gen
				return
			}
			if name != "" {
				group[name] = len(out)
			}
			out = append(out, Unique{table, []string{col}, primary, primary && gen})
		}
		for _, orm := range []string{"gorm", "bun", "xorm"} {
			sep := cmp.Or(map[string]string{"xorm": "("}[orm], ":") // gorm's uniqueIndex:name, bun's unique:name, xorm's unique(name)
			for j, it := range tagItems(tag, orm) {
				k, v, _ := strings.Cut(strings.ToLower(strings.TrimSpace(it)), sep)
				tagged = tagged || k != ""
				switch {
				case orm == "bun" && j == 0:
				case (k == "uniqueindex" || k == "unique" || k == "unique_index") && v != "":
					add(orm+":"+strings.TrimSuffix(strings.Split(v, ",")[0], ")"), false)
				case k == "unique" || k == "uniqueindex" || k == "unique_index":
					add("", false)
				case k == "primarykey" || k == "primary_key" || k == "pk":
					add("pk", true)
				}
			}
		}
	}
	if _, ok := group["pk"]; !ok && tagged && id != "" {
		out = append(out, Unique{table, []string{id}, true, idInt})
	}
	return out
}

// flat returns a struct's fields and tags, an embedded struct's (gorm.Model) in its place.
func flat(st *types.Struct) (fs []*types.Var, tags []string) {
	for i := range st.NumFields() {
		if e, ok := st.Field(i).Type().Underlying().(*types.Struct); ok && st.Field(i).Anonymous() {
			efs, etags := flat(e)
			fs, tags = append(fs, efs...), append(tags, etags...)
		} else {
			fs, tags = append(fs, st.Field(i)), append(tags, st.Tag(i))
		}
	}
	return fs, tags
}
