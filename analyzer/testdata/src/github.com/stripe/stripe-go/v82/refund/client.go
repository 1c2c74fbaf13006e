// Package refund is a stub of stripe-go v82's refund package.
package refund

import stripe "github.com/stripe/stripe-go/v82"

// New creates a new refund.
func New(params *stripe.RefundParams) (*stripe.Refund, error) { return &stripe.Refund{}, nil }
