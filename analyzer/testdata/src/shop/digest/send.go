package digest

import "context"

// Send emails the digest.
func (w *Weekly) Send(ctx context.Context, to string) error {
	return w.svc.Notify(ctx, to, "digest") // want `call to \(\*notifier.Service\).Notify reaches \(\*sesv2.Client\).SendEmail with no //once: promise`
}
