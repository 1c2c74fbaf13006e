// Package orders pays for orders through whichever adapter is configured.
package orders

import (
	"context"

	"shop/paygw"
)

// Checkout reaches the card adapter's charge, which nothing below reports.
func Checkout(ctx context.Context, p paygw.Provider) error {
	return p.Pay(ctx, 100) // want `call to \(paygw.Provider\).Pay reaches`
}
