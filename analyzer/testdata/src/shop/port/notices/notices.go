// Package notices implements port.Notices: each notice's text is its own, through one
// common send helper, but whether a notice is due is decided by the code that calls the
// port in other packages. Its methods are adapters of that port, judged at those calls.
package notices

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"shop/port"
)

var _ port.Notices = (*Templates)(nil)

type Templates struct{ SES *sesv2.Client }

// subjects are the notices' own texts.
var subjects = map[string]string{"welcome": "Welcome to the shop", "goodbye": "Sorry to see you go"}

func (t *Templates) Welcome(ctx context.Context, to string) error {
	subject := strings.ToUpper(subjects["welcome"])
	return t.mail(ctx, to, subject)
}

func (t *Templates) Goodbye(ctx context.Context, to string) error {
	subject := strings.ToUpper(subjects["goodbye"])
	return t.mail(ctx, to, subject)
}

func (t *Templates) mail(ctx context.Context, to, subject string) error {
	_, err := t.SES.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(to + subject)})
	return err
}
