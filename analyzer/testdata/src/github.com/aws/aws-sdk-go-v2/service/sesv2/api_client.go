// Package sesv2 is a stub of aws-sdk-go-v2's sesv2 client.
package sesv2

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
)

type Options struct{ Region string }

type Client struct{ options Options }

func NewFromConfig(cfg aws.Config, optFns ...func(*Options)) *Client { return &Client{} }

type SendEmailInput struct {
	Content          *types.EmailContent
	Destination      *types.Destination
	FromEmailAddress *string
}

type SendEmailOutput struct{ MessageId *string }

// SendEmail sends an email message.
func (c *Client) SendEmail(ctx context.Context, params *SendEmailInput, optFns ...func(*Options)) (*SendEmailOutput, error) {
	return &SendEmailOutput{}, nil
}

type GetAccountInput struct{}
type GetAccountOutput struct{}

// GetAccount reads the account's settings.
func (c *Client) GetAccount(ctx context.Context, params *GetAccountInput, optFns ...func(*Options)) (*GetAccountOutput, error) {
	return &GetAccountOutput{}, nil
}
