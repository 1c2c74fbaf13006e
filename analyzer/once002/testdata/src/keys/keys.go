// Package keys hands idempotency keys to a provider and to promises.
package keys

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/customer"
)

type Org struct{ ID string }

// fresh keys a customer create by a new UUID: every retry is a new customer.
func fresh(email string) {
	p := &stripe.CustomerParams{Email: stripe.String(email)}
	p.SetIdempotencyKey(uuid.NewString()) // want `the key set by SetIdempotencyKey is made from uuid.NewString: a retry makes a new key, and the provider does the work again`
	customer.New(p)
}

// stable keys it by the order: a retry sends the same key.
func stable(email, order string) {
	p := &stripe.CustomerParams{Email: stripe.String(email)}
	p.SetIdempotencyKey("customer-" + order)
	customer.New(p)
}

func newKey() string { return "k-" + rand.Text() }

// header sets the Idempotency-Key from a helper that draws a random value, and from the
// clock.
func header(req *http.Request, order string) {
	req.Header.Set("Idempotency-Key", newKey())                                      // want `the Idempotency-Key header is made from keys.newKey, which returns rand.Text`
	req.Header.Set("Idempotency-Key", fmt.Sprintf("%s-%d", order, time.Now().Unix())) // want `the Idempotency-Key header is made from time.Now`
	req.Header.Set("Idempotency-Key", "order-"+order)
}

// Count counts a unit of the org's daily allowance: the day is the counter's bucket.
//
//once:statement key=org.ID,day cap=100
func Count(ctx context.Context, org Org, day string) error { return nil }

// Notify sends the provider's request keyed by ref.
//
//once:provider key=ref
func Notify(ctx context.Context, ref string) error { return nil }

func callers(ctx context.Context, org Org) {
	Count(ctx, org, time.Now().UTC().Format("2006-01-02"))
	Count(ctx, org, time.Now().UTC().Truncate(24*time.Hour).String())
	Count(ctx, org, time.Now().String()) // want `the key of keys.Count is made from time.Now: a retry makes a new key, and the //once:statement promise runs it again`
	Notify(ctx, time.Now().UTC().Format("2006-01-02")) // want `the key of keys.Notify is made from time.Now: a retry makes a new key, and the provider does the work again`
	Notify(ctx, "order-1")
}

// ignored is silenced where the finding says the key is made.
func ignored(req *http.Request) {
	k := uuid.NewString() //oncelint:ignore ONCE002 the key is stored with the job before the first attempt
	req.Header.Set("Idempotency-Key", k)
}
