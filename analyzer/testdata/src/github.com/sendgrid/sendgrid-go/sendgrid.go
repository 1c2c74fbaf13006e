// Package sendgrid is a stub of sendgrid-go.
package sendgrid

import (
	"context"

	"github.com/sendgrid/rest"
	"github.com/sendgrid/sendgrid-go/helpers/mail"
)

type Client struct{ rest.Request }

func NewSendClient(key string) *Client { return &Client{} }

// Send sends an email through Twilio SendGrid.
func (cl *Client) Send(email *mail.SGMailV3) (*rest.Response, error) { return &rest.Response{}, nil }

// SendWithContext sends an email through Twilio SendGrid with context.Context.
func (cl *Client) SendWithContext(ctx context.Context, email *mail.SGMailV3) (*rest.Response, error) {
	return &rest.Response{}, nil
}
