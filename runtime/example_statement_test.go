package once_test

import (
	"context"
	"errors"
	"fmt"

	once "github.com/oncekit/once/runtime"
)

// An organisation may generate ideas twice a month. A run that fails gives its unit back:
// the allowance counts only what was delivered.
func ExampleStatement() {
	ctx := context.Background()
	db := examplePool()
	allowance := once.Statement{Name: "ideas.Generate", Cap: 2}
	key := once.MustKey("org", 7, "2026-11")

	failing := func(context.Context) error { return errors.New("model unavailable") }
	out, err := allowance.Do(ctx, db, key, 1, failing)
	fmt.Println(out.Status, err)

	generate := func(context.Context) error { return nil }
	for range 3 {
		out, err := allowance.Do(ctx, db, key, 1, generate)
		fmt.Println(out.Status, out.Count, err, out.Err())
	}

	// Output:
	// ran model unavailable
	// ran 1 <nil> <nil>
	// ran 2 <nil> <nil>
	// refused 2 <nil> once: refused: the cap is reached (2 units used)
}
