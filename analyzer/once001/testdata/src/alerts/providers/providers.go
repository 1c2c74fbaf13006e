// Package providers holds an alert sender of its own.
package providers

import (
	"context"

	"github.com/mrz1836/postmark"
)

// Email sends an alert by email.
type Email struct{ pm *postmark.Client }

func (e Email) Send(ctx context.Context, to, text string) error {
	_, err := e.pm.SendEmail(ctx, postmark.Email{To: to, TextBody: text})
	return err
}
