package generator

import (
	"context"
	"errors"

	once "github.com/oncekit/once/runtime"
)

// Verify checks each object against the live database with the runtime's own check
// (once.VerifyRequirements), the one a program makes at start-up with once.Verify, and
// returns what is missing, INVALID or in another form. An error means the check itself
// could not be made.
func Verify(ctx context.Context, db once.DB, objs []Object) ([]once.Problem, error) {
	err := once.VerifyRequirements(ctx, db, Requirements(objs)...)
	var se *once.SchemaError
	if errors.As(err, &se) {
		return se.Problems, nil
	}
	return nil, err
}
