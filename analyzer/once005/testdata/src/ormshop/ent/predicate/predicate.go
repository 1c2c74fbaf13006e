// Package predicate holds the generated predicate types.
package predicate

import "entgo.io/ent/dialect/sql"

type User func(*sql.Selector)

type Voucher func(*sql.Selector)
