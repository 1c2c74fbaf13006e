package once_test

import (
	"context"
	"errors"
	"fmt"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// A paid report at the front door: the client's reference, scoped to the authenticated
// account, makes one report however many times it is sent. The usage entry is written with
// the outcome, and the owner's email is a follow-up, delivered by a drain (onceops.Drain).
func ExampleAttempt() {
	ctx := context.Background()
	db := examplePool()
	generate := once.Forever{Name: "reports.Generate"}
	ref := once.Ref{
		Scope: once.MustKey("acct-7"), // from authentication, never from the request body
		Key:   once.MustKey("3f1c9a52-generate"),
		Input: map[string]any{"source": "q3.csv", "format": "pdf"},
	}
	for range 2 {
		report, out, err := once.ForeverValue(ctx, db, generate, ref, func(ctx context.Context) (string, error) {
			a, _ := once.AttemptFrom(ctx)
			fmt.Println("calling the model with key", a.ProviderKey("generate") != "")
			err := errors.Join(
				a.Record(once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1}),
				a.FollowUp("email-owner", map[string]string{"report": "rep_1"}),
			)
			return "rep_1", err
		})
		fmt.Println(out.Status, report, err)
	}

	drain := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{
		"email-owner": func(ctx context.Context, f onceops.FollowUp) error {
			fmt.Printf("emailing %s about %s\n", f.Scope, f.Payload)
			return nil
		},
	}}
	res, err := drain.Run(ctx, db)
	fmt.Println("delivered:", res.Delivered, err)

	var usage int
	db.QueryRow(ctx, "SELECT count(*) FROM once.ledger WHERE scope = 'acct-7'").Scan(&usage)
	fmt.Println("usage rows:", usage)
	// Output:
	// calling the model with key true
	// ran rep_1 <nil>
	// duplicate rep_1 <nil>
	// emailing acct-7 about {"report":"rep_1"}
	// delivered: 1 <nil>
	// usage rows: 1
}
