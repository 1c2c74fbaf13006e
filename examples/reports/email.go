package reports

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/oncekit/once/runtime/onceops"
)

// deliverEmail sends the email-owner follow-up. The drain retries it alone when it fails,
// so a failing email service delays the email and never makes the report again; the
// follow-up's provider key is the same on every delivery, so a delivery whose answer was
// lost is not sent twice by a provider that honours keys.
func (app *App) deliverEmail(ctx context.Context, f onceops.FollowUp) error {
	var m ownerEmail
	if err := json.Unmarshal(f.Payload, &m); err != nil {
		return fmt.Errorf("follow-up %d: its payload: %w", f.ID, err)
	}
	if m.To == "" {
		return fmt.Errorf("follow-up %d: no address to email", f.ID)
	}
	_, err := app.mail.Post(ctx, "/v1/emails", f.ProviderKey, map[string]any{
		"to":      m.To,
		"subject": m.Subject,
		"text":    fmt.Sprintf("Your report is ready: /reports/%d", m.Report),
	})
	if err != nil {
		return fmt.Errorf("follow-up %d: %w", f.ID, err)
	}
	return nil
}
