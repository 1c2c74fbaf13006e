// Package mailsvc is the module's own mail service, called from several packages: each
// caller decides what it sends, so each caller is judged at its call, not the service.
package mailsvc

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// Send sends one email.
func Send(ctx context.Context, ses *sesv2.Client, to, body string) error {
	_, err := ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(to)})
	return err
}
