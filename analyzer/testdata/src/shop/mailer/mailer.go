// Package mailer sends the shop's emails through Amazon SES.
package mailer

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
)

type Mailer struct {
	ses  *sesv2.Client
	from string
}

func New(ses *sesv2.Client, from string) *Mailer { return &Mailer{ses: ses, from: from} }

// Send sends one email. It is exported and called by no one in this package, so it is
// judged where it is called.
func (m *Mailer) Send(ctx context.Context, to, subject, body string) error {
	_, err := m.ses.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(m.from),
		Destination:      &types.Destination{ToAddresses: []string{to}},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String(subject)},
			Body:    &types.Body{Text: &types.Content{Data: aws.String(body)}},
		}},
	})
	if err != nil {
		return fmt.Errorf("mailer: send to %s: %w", to, err)
	}
	return nil
}
