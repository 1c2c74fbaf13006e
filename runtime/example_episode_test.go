package once_test

import (
	"context"
	"fmt"

	once "github.com/oncekit/once/runtime"
)

// A paid data source runs out of credit. The operator is told once per outage, not once per
// failing request and not once a day; when the source answers again, the latch is rearmed
// for the next outage.
func ExampleEpisode() {
	ctx := context.Background()
	db := examplePool()
	alert := once.Episode{Name: "sources.CreditExhausted"}
	notify := func(context.Context) error {
		fmt.Println("  email: the search source is out of credit")
		return nil
	}

	for _, event := range []string{"fail", "fail", "recover", "fail", "fail"} {
		fmt.Println(event)
		switch event {
		case "fail":
			alert.Do(ctx, db, "search", notify)
		case "recover":
			alert.Rearm(ctx, db, "search")
		}
	}

	// Output:
	// fail
	//   email: the search source is out of credit
	// fail
	// recover
	// fail
	//   email: the search source is out of credit
	// fail
}
