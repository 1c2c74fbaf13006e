// Package gateway takes payments through whichever provider is configured, behind an
// interface: the implementation is reached only through it.
package gateway

import (
	"context"

	stripe "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/charge"
)

// PaymentProvider charges a card.
type PaymentProvider interface {
	Pay(ctx context.Context, customer string, amount int64) error
}

// StripeProvider charges through Stripe.
type StripeProvider struct{}

// Pay is reached only through PaymentProvider, from another package, with no promise:
// reported here, where the charge is made.
func (StripeProvider) Pay(ctx context.Context, customer string, amount int64) error {
	_, err := charge.New(&stripe.ChargeParams{Amount: stripe.Int64(amount), Customer: stripe.String(customer)}) // want `call to charge.New has no idempotency key and no //once: promise: a retry charges the card again; set IdempotencyKey \(or call SetIdempotencyKey\) from a stable id, or declare a promise on StripeProvider.Pay`
	return err
}
