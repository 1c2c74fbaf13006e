// Package reminders texts customers about deliveries.
package reminders

import (
	"context"

	"example.com/app/smsapi"
)

func remind(ctx context.Context, c *smsapi.Client, phone string) error {
	return c.Send(ctx, smsapi.Message{To: phone, Body: "Your parcel arrives today"})
}

func remindKeyed(ctx context.Context, c *smsapi.Client, phone, delivery string) error {
	return c.Send(ctx, smsapi.Message{To: phone, Body: "Your parcel arrives today", RequestID: "delivery-" + delivery})
}

// Run sends today's reminders.
func Run(ctx context.Context, c *smsapi.Client, phones []string) {
	for _, p := range phones {
		_ = remind(ctx, c, p)
		_ = remindKeyed(ctx, c, p, p)
	}
}
