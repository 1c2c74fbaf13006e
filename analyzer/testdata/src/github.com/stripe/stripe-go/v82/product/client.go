// Package product is a stub of stripe-go v82's product package.
package product

import stripe "github.com/stripe/stripe-go/v82"

// New creates a new product.
func New(params *stripe.ProductParams) (*stripe.Product, error) { return &stripe.Product{}, nil }

// Get returns the details of a product.
func Get(id string, params *stripe.ProductParams) (*stripe.Product, error) {
	return &stripe.Product{}, nil
}
