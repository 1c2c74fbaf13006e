// Package session is a stub of stripe-go v82's checkout/session package.
package session

import stripe "github.com/stripe/stripe-go/v82"

// New creates a new checkout session.
func New(params *stripe.CheckoutSessionParams) (*stripe.CheckoutSession, error) {
	return &stripe.CheckoutSession{}, nil
}
