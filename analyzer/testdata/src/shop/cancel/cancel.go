// Package cancel tells a customer their subscription is cancelled. Cancelled is called
// from one other package, with no promise: its email is reported here, once.
package cancel

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// Cancelled emails the customer.
func Cancelled(ctx context.Context, ses *sesv2.Client, to string) error {
	from := fmt.Sprintf("billing+%s@shop.example", to)
	_, err := ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(from)}) // want `call to \(\*sesv2.Client\).SendEmail has no //once: promise and the provider takes no idempotency key: a retry sends the email again; declare a promise on Cancelled`
	return err
}
