package once_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	once "github.com/oncekit/once/runtime"
)

// Starting a paid run for an organisation holds a short lease: a simultaneous second press
// is turned away, and if the process is killed mid-start the lease expires by itself after
// ten seconds.
func ExampleLease() {
	ctx := context.Background()
	db := examplePool()
	lock := once.Lease{Name: "ideas.StartLock", TTL: 10 * time.Second}

	out, err := lock.Do(ctx, db, "org/7", func(ctx context.Context) error {
		held, _ := once.LeaseFrom(ctx)
		fmt.Println("holding, fence", held.Fence)

		// The simultaneous second press: it did not run, and says why.
		second, err := lock.Do(ctx, db, "org/7", func(context.Context) error { return nil })
		fmt.Println("second press:", second.Status, err, errors.Is(second.Err(), once.ErrBusy))
		return nil
	})
	fmt.Println(out.Status, err)

	out, _ = lock.Do(ctx, db, "org/7", func(context.Context) error { return nil })
	fmt.Println("next press: fence", out.Fence)

	// Output:
	// holding, fence 1
	// second press: busy <nil> true
	// ran <nil>
	// next press: fence 2
}
