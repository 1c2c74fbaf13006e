// Package user holds the generated predicates of the User entity.
package user

import (
	"entgo.io/ent/dialect/sql"

	"ormshop/ent/predicate"
)

const FieldEmail = "email"

func EmailEQ(v string) predicate.User { return predicate.User(sql.FieldEQ(FieldEmail, v)) }

func ID(id int) predicate.User { return predicate.User(sql.FieldEQ("id", id)) }
