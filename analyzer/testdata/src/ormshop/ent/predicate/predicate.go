// Package predicate holds the generated predicate types.
package predicate

type User func(*string)

type Voucher func(*string)
