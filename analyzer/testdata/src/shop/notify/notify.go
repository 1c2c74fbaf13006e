// Package notify tells customers what happened to their orders.
package notify

import (
	"context"
	"fmt"

	"shop/mailer"
)

type Order struct {
	ID    string
	Email string
	Total string
}

// Receipt emails the receipt of a paid order.
func Receipt(ctx context.Context, m *mailer.Mailer, o Order) error {
	return m.Send(ctx, o.Email, "Your receipt", receiptBody(o))
}

func receiptBody(o Order) string { return fmt.Sprintf("Order %s: %s", o.ID, o.Total) }
