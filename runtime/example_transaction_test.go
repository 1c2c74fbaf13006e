package once_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// A subscription is synchronised from the payment provider's webhooks, which arrive twice
// and out of order. The decision (create the row or leave it) is made from a read, so the
// read and the write run under the customer's lock.
func ExampleTransaction() {
	ctx := context.Background()
	db := examplePool()
	db.Exec(ctx, "CREATE TABLE subscriptions (customer text PRIMARY KEY, plan text NOT NULL)")

	syncSub := once.Transaction{Name: "billing.SyncSubscription", LockTimeout: 5 * time.Second}
	var what string
	apply := func(ctx context.Context, tx pgx.Tx) error {
		var plan string
		err := tx.QueryRow(ctx, "SELECT plan FROM subscriptions WHERE customer = 'cus_42'").Scan(&plan)
		if errors.Is(err, pgx.ErrNoRows) {
			what = "created pro"
			_, err = tx.Exec(ctx, "INSERT INTO subscriptions VALUES ('cus_42', 'pro')")
			return err
		}
		what = "already " + plan
		return err
	}
	for range 2 { // the same webhook, delivered twice
		out, err := syncSub.Do(ctx, db, "cus_42", apply)
		fmt.Println(what, out.Status, err)
	}

	// Output:
	// created pro ran <nil>
	// already pro ran <nil>
}
