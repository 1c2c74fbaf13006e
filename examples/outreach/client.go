package outreach

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	once "github.com/oncekit/once/runtime"
)

// client speaks JSON to one provider's HTTP API.
type client struct {
	base string
	http *http.Client
}

// ProviderError is a provider's refusal, with its HTTP status.
type ProviderError struct {
	Status int
	Body   string
}

// Error returns the status and the provider's message.
func (e *ProviderError) Error() string {
	return fmt.Sprintf("provider answered %d: %s", e.Status, strings.TrimSpace(e.Body))
}

// reply is the part of a provider's answer the app keeps: the id of what it did.
type reply struct {
	ID string `json:"id"`
}

// post sends body to path. The idempotency key is the one a //once:provider guard put in
// ctx: every call that performs an effect runs under such a guard, so a retry of the same
// work sends the same key and the provider does the work once.
func (c client) post(ctx context.Context, path string, body any) (reply, error) {
	enc, err := json.Marshal(body)
	if err != nil {
		return reply{}, fmt.Errorf("encoding the request to %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(enc))
	if err != nil {
		return reply{}, fmt.Errorf("building the request to %s: %w", path, err)
	}
	// net/http resends a request that carries Idempotency-Key by itself when a reused
	// connection drops before the answer. Without GetBody it cannot: a lost answer reaches
	// the job, which is retried with the same key, whichever connection the send used.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	if key, ok := once.ProviderKeyFrom(ctx); ok {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("posting to %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return reply{}, fmt.Errorf("reading the answer from %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return reply{}, fmt.Errorf("posting to %s: %w", path, &ProviderError{Status: resp.StatusCode, Body: string(b)})
	}
	var r reply
	if err := json.Unmarshal(b, &r); err != nil {
		return reply{}, fmt.Errorf("decoding the answer from %s: %w", path, err)
	}
	return r, nil
}

// get reads path into into; found is false for a 404.
func (c client) get(ctx context.Context, path string, into any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return false, fmt.Errorf("building the request to %s: %w", path, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	case resp.StatusCode/100 != 2:
		return false, fmt.Errorf("reading %s: %w", path, &ProviderError{Status: resp.StatusCode, Body: string(b)})
	}
	if err := json.Unmarshal(b, into); err != nil {
		return false, fmt.Errorf("decoding %s: %w", path, err)
	}
	return true, nil
}

// Email is a message sent through the email API. Tag says which of the app's emails it is,
// so the tests and the demo can count each kind at the provider.
type Email struct {
	To      string `json:"to"`
	ReplyTo string `json:"reply_to,omitempty"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
	Tag     string `json:"tag"`
}

// send sends e through the email API; the key comes from ctx (see post).
func (c client) send(ctx context.Context, e Email) (string, error) {
	r, err := c.post(ctx, "/v1/emails", e)
	if err != nil {
		return "", fmt.Errorf("sending the %s email to %s: %w", e.Tag, e.To, err)
	}
	return r.ID, nil
}
