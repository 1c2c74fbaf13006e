package once_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	once "github.com/oncekit/once/runtime"
)

// A research run per organisation at a time: a press while the run is open is redirected
// to it; once it has finished, the next press starts a new one.
func ExampleOpen() {
	ctx := context.Background()
	db := examplePool()
	startRun := once.Open{Name: "research.StartRun", Stale: 20 * time.Minute}

	out, err := startRun.Do(ctx, db, "org/7", func(ctx context.Context) error {
		// A second tab presses the button while this run is open.
		again, _ := startRun.Do(ctx, db, "org/7", func(context.Context) error { return nil })
		c, _ := once.ClaimFrom(ctx)
		fmt.Println("second press:", again.Status, "redirected to this run:", again.Holder == strconv.FormatInt(c.ID, 10))
		return nil
	})
	fmt.Println("first press:", out.Status, err)

	out, _ = startRun.Do(ctx, db, "org/7", func(context.Context) error { return nil })
	fmt.Println("after it finished:", out.Status)

	// Output:
	// second press: in flight redirected to this run: true
	// first press: ran <nil>
	// after it finished: ran
}

// Work handed to a queue: the request claims the key, and the worker settles the claim. The
// worker first checks that the claim is still open, so work closed as stale while it waited
// in the queue is not paid for.
func ExampleOpen_Claim() {
	ctx := context.Background()
	db := examplePool()
	enqueue := once.Open{Name: "exports.Enqueue", Stale: time.Hour}

	claim, out, err := enqueue.Claim(ctx, db, "file/9")
	fmt.Println("enqueue:", out.Status, err)
	_, out, _ = enqueue.Claim(ctx, db, "file/9")
	fmt.Println("enqueue again:", out.Status)

	// In the worker, with the claim from the job's arguments:
	if open, _ := claim.Open(ctx, db); open {
		fmt.Println("exporting")
		fmt.Println("finish:", claim.Finish(ctx, db))
	}
	fmt.Println("finish twice:", claim.Finish(ctx, db) != nil)

	// Output:
	// enqueue: ran <nil>
	// enqueue again: in flight
	// exporting
	// finish: <nil>
	// finish twice: true
}
