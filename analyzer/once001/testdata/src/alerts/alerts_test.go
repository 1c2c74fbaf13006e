package alerts

import (
	"context"
	"testing"

	"github.com/mrz1836/postmark"
)

// fake is a test double; it is no implementation the application calls.
type fake struct{ pm *postmark.Client }

func (f fake) Send(ctx context.Context, to, text string) error {
	_, err := f.pm.SendEmail(ctx, postmark.Email{To: to})
	return err
}

func TestFake(t *testing.T) { _ = fake{} }
