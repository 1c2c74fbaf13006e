// Package postmark is a stub of mrz1836/postmark.
package postmark

import "context"

type Client struct{ ServerToken string }

func NewClient(serverToken, accountToken string) *Client { return &Client{ServerToken: serverToken} }

type Email struct {
	From     string
	To       string
	Subject  string
	HTMLBody string
	TextBody string
	Tag      string
}

type EmailResponse struct{ MessageID string }

// SendEmail sends, well, an email.
func (client *Client) SendEmail(ctx context.Context, email Email) (EmailResponse, error) {
	return EmailResponse{}, nil
}
