package tickets

import "context"

// Reply emails the answer to a ticket; this file does not import the service's package.
func (d *Desk) Reply(ctx context.Context, to string) error {
	return d.mail.Notify(ctx, to, "answer") // want `call to \(\*notifier.Service\).Notify reaches \(\*sesv2.Client\).SendEmail with no //once: promise`
}
