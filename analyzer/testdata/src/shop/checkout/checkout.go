// Package checkout pays through the gateway's interface.
package checkout

import (
	"context"

	"shop/gateway"
)

// Complete pays for an order.
func Complete(ctx context.Context, p gateway.PaymentProvider, customer string, amount int64) error {
	return p.Pay(ctx, customer, amount)
}
