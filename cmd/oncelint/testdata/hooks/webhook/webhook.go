// Package webhook posts events to a subscriber's URL.
package webhook

import (
	"context"
	"net/http"
	"os"
	"strings"

	"example.com/hooks/relay"
)

// Webhook posts to one URL.
type Webhook struct{ URL string }

func init() { relay.Register(&Webhook{URL: os.Getenv("WEBHOOK_URL")}) }

// Fire posts the event, once.
func (h *Webhook) Fire(ctx context.Context, event string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, strings.NewReader(event))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
