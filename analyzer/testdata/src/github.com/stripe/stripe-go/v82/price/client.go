// Package price is a stub of stripe-go v82's price package.
package price

import stripe "github.com/stripe/stripe-go/v82"

// New creates a new price.
func New(params *stripe.PriceParams) (*stripe.Price, error) { return &stripe.Price{}, nil }
