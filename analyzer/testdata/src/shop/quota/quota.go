// Package quota tells an account it is over its quota. NotifyOver is called from eight
// places in quotaapi, none under a promise: one root cause, reported once, here.
package quota

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// NotifyOver emails the account's owner.
func NotifyOver(ctx context.Context, ses *sesv2.Client, to string) error {
	_, err := ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(to)}) // want `call to \(\*sesv2.Client\).SendEmail has no //once: promise and the provider takes no idempotency key: a retry sends the email again; declare a promise on NotifyOver`
	return err
}

// Warn emails a warning; every call of it in the module holds a promise, so it is
// covered where it is called.
func Warn(ctx context.Context, ses *sesv2.Client, to string) error {
	_, err := ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(to)})
	return err
}

// Remind emails a reminder; one caller holds a promise, the other does not: the one that
// does not is reported.
func Remind(ctx context.Context, ses *sesv2.Client, to string) error {
	return send(ctx, ses, to)
}

func send(ctx context.Context, ses *sesv2.Client, to string) error {
	_, err := ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(to)})
	return err
}
