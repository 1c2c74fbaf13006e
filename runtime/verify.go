package once

import (
	"context"

	"github.com/oncekit/once/runtime/onceschema"
)

// Verify checks, at start-up, that db holds everything the program's guards rely on: once's
// own tables, indexes and schema step, and every unique index, latch or counter column and
// check that the generated code linked into the program registered (onceschema.Require).
// It returns nil, or an error naming every object missing, INVALID or in another form
// (errors.Is(err, onceschema.ErrSchema)). It is onceschema.Verify, whose doc says more; a
// program calls it once, after its migrations, and refuses to serve when it fails.
func Verify(ctx context.Context, db DB) error { return onceschema.Verify(ctx, db) }
