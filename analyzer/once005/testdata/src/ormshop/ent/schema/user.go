// Package schema holds the ent schema the client is generated from. It is read, not
// compiled, by the tests: the unique email is what makes the User look-ups safe.
package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// User is a signed-up user.
type User struct{ ent.Schema }

// Fields of the User.
func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("email").NotEmpty().Unique(),
		field.String("name"),
	}
}
