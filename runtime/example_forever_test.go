package once_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// A welcome email, once per user for ever, however many times sign-up is retried. The retries
// get the recorded result.
func ExampleForever() {
	ctx := context.Background()
	db := examplePool()
	sendWelcome := once.Forever{Name: "mail.SendWelcome"}
	for range 3 {
		id, out, err := once.ForeverValue(ctx, db, sendWelcome, once.Ref{Key: "user/42"}, func(ctx context.Context) (string, error) {
			fmt.Println("sending the email")
			return "msg_1", nil
		})
		fmt.Println(out.Status, id, err)
	}
	// Output:
	// sending the email
	// ran msg_1 <nil>
	// duplicate msg_1 <nil>
	// duplicate msg_1 <nil>
}

// A key scoped to a tenant and tied to its input: the same key in another tenant is other
// work, and the same key with another input is refused.
func ExampleRef() {
	ctx := context.Background()
	db := examplePool()
	export := once.Forever{Name: "exports.Run"}
	run := func(tenant string, input map[string]any) {
		rows, out, err := once.ForeverValue(ctx, db, export, once.Ref{Scope: tenant, Key: "export-1", Input: input},
			func(context.Context) (int, error) { return 120, nil })
		if errors.Is(err, once.ErrMismatch) {
			fmt.Println(tenant, "refused: the key was first used with another input")
			return
		}
		fmt.Println(tenant, out.Status, rows, err)
	}
	run("acme", map[string]any{"table": "orders", "since": "2026-01-01"})
	run("acme", map[string]any{"since": "2026-01-01", "table": "orders"}) // same input, keys reordered
	run("acme", map[string]any{"table": "orders", "since": "2025-01-01"})
	run("globex", map[string]any{"table": "orders", "since": "2025-01-01"})
	// Output:
	// acme ran 120 <nil>
	// acme duplicate 120 <nil>
	// acme refused: the key was first used with another input
	// globex ran 120 <nil>
}

// A declined card is a terminal failure: recorded once, and every retry gets it back without
// asking the bank again.
func ExampleTerminal() {
	ctx := context.Background()
	db := examplePool()
	charge := once.Forever{Name: "billing.Charge"}
	for range 2 {
		out, err := charge.Do(ctx, db, once.Ref{Key: "order/7"}, func(context.Context) error {
			fmt.Println("asking the bank")
			return once.Terminal(errors.New("card declined"))
		})
		var failure *once.Failure
		if errors.As(err, &failure) {
			fmt.Println(out.Status, "replayed:", failure.Message)
			continue
		}
		fmt.Println(out.Status, err)
	}
	// Output:
	// asking the bank
	// ran card declined
	// duplicate replayed: card declined
}

// The provider took the charge and the connection dropped: nobody knows whether the card was
// charged. The operation is recorded uncertain, refused until resolved, and listed; the
// operator looks the charge up at the provider and records what happened.
func ExampleUncertain() {
	ctx := context.Background()
	db := examplePool()
	charge := once.Forever{Name: "billing.Charge"}
	ref := once.Ref{Key: "order/8"}
	lost := func(context.Context) (string, error) {
		return "", once.Uncertain(errors.New("connection reset after the request was sent"))
	}
	_, _, err := once.ForeverValue(ctx, db, charge, ref, lost)
	fmt.Println("first:", errors.Is(err, once.ErrUncertain))
	_, _, err = once.ForeverValue(ctx, db, charge, ref, lost)
	fmt.Println("retry:", errors.Is(err, once.ErrUncertain))

	list, _ := onceops.ListUncertain(ctx, db, "billing.Charge", 10)
	for _, op := range list {
		fmt.Println("to reconcile:", op.Key, "-", op.Error)
		onceops.ResolveDone(ctx, db, op.ID, "ch_found_at_provider")
	}
	id, out, err := once.ForeverValue(ctx, db, charge, ref, lost)
	fmt.Println("after resolution:", out.Status, id, err)
	// Output:
	// first: true
	// retry: true
	// to reconcile: order/8 - connection reset after the request was sent
	// after resolution: duplicate ch_found_at_provider <nil>
}

// An order for zero items is refused before anything is done: nothing is recorded, so the
// client can correct the order and send it again under the same key, and it is placed.
func ExampleRejected() {
	ctx := context.Background()
	db := examplePool()
	place := once.Forever{Name: "shop.PlaceOrder"}
	for _, qty := range []int{0, 2, 2} {
		id, out, err := once.ForeverValue(ctx, db, place, once.Ref{Key: "cart/31", Input: qty}, func(context.Context) (string, error) {
			if qty <= 0 {
				return "", once.Rejected(errors.New("an order needs at least one item"))
			}
			fmt.Println("placing the order")
			return "ord_1", nil
		})
		fmt.Printf("%v %q %v\n", out.Status, id, err)
	}
	// Output:
	// ran "" an order needs at least one item
	// placing the order
	// ran "ord_1" <nil>
	// duplicate "ord_1" <nil>
}

// A charge whose first call is still running when the retry arrives: without Wait the retry
// is told at once that the key is in flight (no error: the function did not run because
// another caller holds the promise); with Wait it waits for the first call's result.
func ExampleForever_Wait() {
	ctx := context.Background()
	db := examplePool()
	charging, release := make(chan struct{}), make(chan struct{})
	first := make(chan string)
	go func() {
		id, _, _ := once.ForeverValue(ctx, db, once.Forever{Name: "billing.Charge"}, once.Ref{Key: "order/9"},
			func(context.Context) (string, error) {
				close(charging)
				<-release
				return "ch_9", nil
			})
		first <- id
	}()
	<-charging
	_, out, err := once.ForeverValue(ctx, db, once.Forever{Name: "billing.Charge"}, once.Ref{Key: "order/9"},
		func(context.Context) (string, error) { return "ch_other", nil })
	fmt.Println("retry:", out.Status, err, out.Err() != nil)

	go func() { time.Sleep(50 * time.Millisecond); close(release) }()
	id, out, err := once.ForeverValue(ctx, db, once.Forever{Name: "billing.Charge", Wait: 5 * time.Second}, once.Ref{Key: "order/9"},
		func(context.Context) (string, error) { return "ch_other", nil })
	fmt.Println("retry with Wait:", out.Status, id, err)
	fmt.Println("first:", <-first)
	// Output:
	// retry: in flight <nil> true
	// retry with Wait: duplicate ch_9 <nil>
	// first: ch_9
}
