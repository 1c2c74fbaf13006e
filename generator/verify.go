package generator

import (
	"context"
	"errors"

	"github.com/oncekit/once/runtime/onceschema"
)

// Verify checks each object against the live database with the runtime's own check
// (onceschema.VerifyRequirements), the one a program makes at start-up with once.Verify, and
// returns what is missing, INVALID or in another form. An error means the check itself
// could not be made.
func Verify(ctx context.Context, db onceschema.DB, objs []Object) ([]onceschema.Problem, error) {
	err := onceschema.VerifyRequirements(ctx, db, Requirements(objs)...)
	var se *onceschema.Error
	if errors.As(err, &se) {
		return se.Problems, nil
	}
	return nil, err
}
