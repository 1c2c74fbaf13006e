// Package sesmail implements port.Mailer with SES: it sends what it is given, so whether
// an email is due is decided by the code that calls the port.
package sesmail

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

type Client struct{ SES *sesv2.Client }

// Send passes what it is given to SES.
func (c *Client) Send(ctx context.Context, to, subject, body string) error {
	_, err := c.SES.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(to)})
	return err
}
