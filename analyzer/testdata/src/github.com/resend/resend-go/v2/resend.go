// Package resend is a stub of resend-go v2.
package resend

import "context"

type SendEmailRequest struct {
	From    string
	To      []string
	Subject string
	Html    string
	Text    string
}

type SendEmailResponse struct{ Id string }

type SendEmailOptions struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

type EmailsSvc interface {
	SendWithOptions(ctx context.Context, params *SendEmailRequest, options *SendEmailOptions) (*SendEmailResponse, error)
	SendWithContext(ctx context.Context, params *SendEmailRequest) (*SendEmailResponse, error)
	Send(params *SendEmailRequest) (*SendEmailResponse, error)
}

type EmailsSvcImpl struct{ client *Client }

func (s *EmailsSvcImpl) SendWithOptions(ctx context.Context, params *SendEmailRequest, options *SendEmailOptions) (*SendEmailResponse, error) {
	return &SendEmailResponse{}, nil
}
func (s *EmailsSvcImpl) SendWithContext(ctx context.Context, params *SendEmailRequest) (*SendEmailResponse, error) {
	return &SendEmailResponse{}, nil
}
func (s *EmailsSvcImpl) Send(params *SendEmailRequest) (*SendEmailResponse, error) {
	return &SendEmailResponse{}, nil
}

type Client struct{ Emails EmailsSvc }

func NewClient(apiKey string) *Client {
	c := &Client{}
	c.Emails = &EmailsSvcImpl{client: c}
	return c
}
