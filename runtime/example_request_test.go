package once_test

import (
	"context"
	"fmt"

	once "github.com/oncekit/once/runtime"
)

// The layout, the page and a handler of one request all need the signed-in user: the first
// to ask loads it, the others share that load. A second request loads it again.
func ExampleRequest() {
	loadUser := once.Request{Name: "auth.LoadUser"}
	load := func(context.Context) (string, error) {
		fmt.Println("loading user 7")
		return "ada", nil
	}

	ctx := once.WithRequestScope(context.Background()) // in middleware, once per request
	for range 3 {
		name, out, err := once.RequestValue(ctx, loadUser, "7", load)
		fmt.Println(name, out.Status, err)
	}

	next := once.WithRequestScope(context.Background()) // the next request
	_, out, _ := once.RequestValue(next, loadUser, "7", load)
	fmt.Println(out.Status)

	// Output:
	// loading user 7
	// ada ran <nil>
	// ada duplicate <nil>
	// ada duplicate <nil>
	// loading user 7
	// ran
}
