// Package notifier is the module's own notification service, held in a field by the
// packages that use it and called from files that do not import it.
package notifier

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

type Service struct {
	ses *sesv2.Client
}

// Notify sends one email; its callers, in two packages, decide what is sent.
func (s *Service) Notify(ctx context.Context, to, body string) error {
	_, err := s.ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(to)})
	return err
}
