// Package paymentintent is a stub of stripe-go v82's paymentintent package.
package paymentintent

import stripe "github.com/stripe/stripe-go/v82"

// New creates a new payment intent.
func New(params *stripe.PaymentIntentParams) (*stripe.PaymentIntent, error) {
	return &stripe.PaymentIntent{}, nil
}
