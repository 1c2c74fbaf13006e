// Package charge is a stub of stripe-go v82's charge package.
package charge

import stripe "github.com/stripe/stripe-go/v82"

// New creates a new charge.
func New(params *stripe.ChargeParams) (*stripe.Charge, error) { return &stripe.Charge{}, nil }

// Get returns the details of a charge.
func Get(id string, params *stripe.ChargeParams) (*stripe.Charge, error) {
	return &stripe.Charge{}, nil
}

// Client is used to invoke /charges APIs.
type Client struct{ Key string }

// New creates a new charge.
func (c Client) New(params *stripe.ChargeParams) (*stripe.Charge, error) {
	return &stripe.Charge{}, nil
}
