package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Provider is a client of a paid API that takes an Idempotency-Key the way Stripe does:
// the model that writes reports, and the email service that tells owners about them.
type Provider struct {
	// BaseURL is the API's address, "http://127.0.0.1:4010".
	BaseURL string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
	// Dedupes says the provider honours Idempotency-Key: a request repeated with the same
	// key is answered with the first one's result and does nothing new. When false, a
	// request whose answer was lost may or may not have been performed, and repeating it
	// may perform it twice.
	Dedupes bool
}

// ErrNoAnswer is wrapped by Post's error when the request may have reached the provider but
// no answer came back (the connection dropped, the context ended): whether the effect
// happened is unknown.
var ErrNoAnswer = errors.New("no answer from the provider")

// ProviderError is a provider's refusal: an answer with an error status.
type ProviderError struct {
	// Status is the HTTP status.
	Status int
	// Message is the provider's explanation.
	Message string
}

// Error returns the status and the provider's message.
func (e *ProviderError) Error() string {
	return fmt.Sprintf("provider answered %d: %s", e.Status, e.Message)
}

// Retryable reports whether the same request may succeed later: the provider was busy or
// failing (5xx, 429), or was still performing the same key (409).
func (e *ProviderError) Retryable() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusConflict
}

// Effect is what a provider answers for a performed request.
type Effect struct {
	// ID is the provider's id for the effect ("eff_000001").
	ID string `json:"id"`
	// Replayed says the provider answered from an earlier request with the same key.
	Replayed bool `json:"-"`
}

// Post sends body as JSON to path with key as its Idempotency-Key. key is required: every
// effect this application asks a provider for is named, so that a retry is recognised.
func (p *Provider) Post(ctx context.Context, path, key string, body any) (Effect, error) {
	if key == "" {
		return Effect{}, fmt.Errorf("POST %s: no idempotency key", path)
	}
	enc, err := json.Marshal(body)
	if err != nil {
		return Effect{}, fmt.Errorf("POST %s: encoding the body: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(p.BaseURL, "/")+path, bytes.NewReader(enc))
	if err != nil {
		return Effect{}, fmt.Errorf("POST %s: %w", path, err)
	}
	// net/http resends a request that carries Idempotency-Key by itself when a kept-alive
	// connection drops before the answer; the caller decides on retries here, so that a
	// lost answer is seen and recorded, not hidden.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	client := p.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Effect{}, fmt.Errorf("POST %s: %w: %w", path, ErrNoAnswer, err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return Effect{}, fmt.Errorf("POST %s: reading the answer: %w: %w", path, ErrNoAnswer, err)
	}
	if resp.StatusCode != http.StatusOK {
		var problem struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal(payload, &problem) // a body that is not the provider's JSON leaves the message empty
		return Effect{}, fmt.Errorf("POST %s: %w", path, &ProviderError{Status: resp.StatusCode, Message: problem.Error.Message})
	}
	var e Effect
	if err := json.Unmarshal(payload, &e); err != nil || e.ID == "" {
		return Effect{}, fmt.Errorf("POST %s: the answer names no effect: %q", path, payload)
	}
	e.Replayed = resp.Header.Get("Idempotent-Replayed") == "true"
	return e, nil
}
