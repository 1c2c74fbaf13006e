package once_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// A two-step operation whose first attempt fails after its first step: the retry resumes
// from the checkpoint, with the first step's result, instead of doing it again.
func ExampleStep() {
	ctx := context.Background()
	db := examplePool()
	build := once.Forever{Name: "reports.Build"}
	attempt := 0
	fn := func(ctx context.Context) (string, error) {
		attempt++
		a, _ := once.AttemptFrom(ctx)
		data, err := once.Step(ctx, db, a, "extract", func(ctx context.Context, tx pgx.Tx) (string, error) {
			fmt.Println("extracting, attempt", attempt)
			return "rows-1", nil // the step's own writes would use tx
		})
		if err != nil {
			return "", err
		}
		if attempt == 1 {
			return "", errors.New("renderer unavailable") // retryable: the claim is released
		}
		fmt.Println("rendering", data, "on attempt", attempt)
		return "report.pdf", nil
	}
	ref := once.Ref{Key: "report/1"}
	once.ForeverValue(ctx, db, build, ref, fn)
	out, _, err := once.ForeverValue(ctx, db, build, ref, fn)
	fmt.Println(out, err)
	// Output:
	// extracting, attempt 1
	// rendering rows-1 on attempt 2
	// report.pdf <nil>
}
