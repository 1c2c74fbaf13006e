// Package hooks delivers webhooks under Standard Webhooks, whose receivers deduplicate by
// the webhook-id header: the id is the delivery's idempotency key.
package hooks

import (
	"bytes"
	"context"
	"net/http"

	"github.com/google/uuid"
)

type Dispatcher struct {
	client  *http.Client
	retries int
}

// deliver makes a fresh id on every attempt of its retry loop: the receiver cannot tell
// a retry from a new event.
func (d *Dispatcher) deliver(ctx context.Context, url string, payload []byte) error {
	var err error
	for i := 0; i < d.retries; i++ {
		msgID := uuid.NewString()
		req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
		if rerr != nil {
			return rerr
		}
		req.Header.Set("webhook-id", msgID) // want `idempotency key comes from uuid.NewString: a retry makes a new key`
		var resp *http.Response
		if resp, err = d.client.Do(req); err == nil {
			return resp.Body.Close()
		}
	}
	return err
}

// deliverEvent sends the event's own id: every attempt, and every retry of the caller,
// sends the same one.
func (d *Dispatcher) deliverEvent(ctx context.Context, url, eventID string, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("webhook-id", "evt_"+eventID)
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
