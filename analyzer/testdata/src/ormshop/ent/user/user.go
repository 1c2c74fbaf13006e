// Package user holds the generated predicates of the User entity.
package user

import "ormshop/ent/predicate"

func EmailEQ(v string) predicate.User { return nil }

func ID(id int) predicate.User { return nil }
