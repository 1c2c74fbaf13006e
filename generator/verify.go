package generator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Problem is one constraint the code relies on that a live database lacks, holds INVALID,
// or holds in another form.
type Problem struct {
	Object Object
	// What is "missing", "invalid" or "differs".
	What string
	// Live is what the database has, when it differs.
	Live string
}

// String says what is wrong with which object, and which guards rely on it, as verify
// prints it.
func (p Problem) String() string {
	var b strings.Builder
	label := p.Object.Kind + " " + p.Object.Name
	if p.Object.Table != "" {
		label += " on " + p.Object.Table
	}
	switch p.What {
	case "missing":
		fmt.Fprintf(&b, "missing: %s", label)
	case "invalid":
		fmt.Fprintf(&b, "INVALID: %s (a failed concurrent build left it; it enforces nothing: DROP INDEX CONCURRENTLY it and apply its migration again)", label)
	default:
		fmt.Fprintf(&b, "differs: %s\n  want: %s\n  have: %s", label, p.Object.Def, p.Live)
	}
	if len(p.Object.Guards) > 0 {
		fmt.Fprintf(&b, "\n  relied on by: %s", strings.Join(p.Object.Guards, ", "))
	}
	return b.String()
}

// querier is what Verify needs of a connection.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Verify checks each object against the live database and returns what is missing,
// INVALID or different. An error means the check itself could not be made.
func Verify(ctx context.Context, db querier, objs []Object) ([]Problem, error) {
	var out []Problem
	for _, o := range objs {
		var ps []Problem
		var err error
		switch o.Kind {
		case ObjRuntime:
			ps, err = verifyRuntime(ctx, db, o)
		case ObjIndex:
			ps, err = verifyIndex(ctx, db, o)
		case ObjColumn:
			ps, err = verifyColumn(ctx, db, o)
		case ObjCheck:
			ps, err = verifyCheck(ctx, db, o)
		}
		if err != nil {
			return nil, fmt.Errorf("verifying %s %s: %w", o.Kind, o.Name, err)
		}
		out = append(out, ps...)
	}
	return out, nil
}

func verifyRuntime(ctx context.Context, db querier, o Object) ([]Problem, error) {
	tables, indexes := runtimeRelations()
	var out []Problem
	for _, t := range tables {
		var ok bool
		if err := db.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", "once."+t).Scan(&ok); err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, Problem{Object: Object{Kind: "table", Name: "once." + t, Guards: o.Guards}, What: "missing"})
		}
	}
	for _, name := range indexes {
		ps, err := verifyIndex(ctx, db, Object{Kind: ObjIndex, Name: name, Table: "once"})
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

const indexSQL = `SELECT pg_get_indexdef(i.indexrelid), i.indisvalid
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`

func verifyIndex(ctx context.Context, db querier, o Object) ([]Problem, error) {
	schema, _, _ := strings.Cut(o.Table, ".")
	var def string
	var valid bool
	err := db.QueryRow(ctx, indexSQL, schema, o.Name).Scan(&def, &valid)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return []Problem{{Object: o, What: "missing"}}, nil
	case err != nil:
		return nil, err
	case !valid:
		return []Problem{{Object: o, What: "invalid", Live: def}}, nil
	case o.Def != "" && def != o.Def:
		return []Problem{{Object: o, What: "differs", Live: def}}, nil
	}
	return nil, nil
}

func verifyColumn(ctx context.Context, db querier, o Object) ([]Problem, error) {
	var typ string
	err := db.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = to_regclass($1) AND attname = $2 AND attnum > 0 AND NOT attisdropped`, o.Table, o.Name).Scan(&typ)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return []Problem{{Object: o, What: "missing"}}, nil
	case err != nil:
		return nil, err
	case typ != o.Def:
		return []Problem{{Object: o, What: "differs", Live: typ}}, nil
	}
	return nil, nil
}

func verifyCheck(ctx context.Context, db querier, o Object) ([]Problem, error) {
	var def string
	var valid bool
	err := db.QueryRow(ctx, `SELECT pg_get_constraintdef(oid), convalidated FROM pg_constraint
WHERE conrelid = to_regclass($1) AND conname = $2`, o.Table, o.Name).Scan(&def, &valid)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return []Problem{{Object: o, What: "missing"}}, nil
	case err != nil:
		return nil, err
	case !valid:
		return []Problem{{Object: o, What: "invalid", Live: def}}, nil
	case def != o.Def:
		return []Problem{{Object: o, What: "differs", Live: def}}, nil
	}
	return nil, nil
}
