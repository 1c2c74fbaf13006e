package paidactions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	once "github.com/oncekit/once/runtime"
)

// ProviderName names the model provider in the cost ledger.
const ProviderName = "genmodel"

// ErrOutcomeUnknown: the provider may or may not have done the work (the request timed
// out, the connection dropped after it was sent, or a request with the same key is still
// running there). The action must not be billed again as new work: the recovery job asks
// again with the same key.
var ErrOutcomeUnknown = errors.New("provider outcome unknown")

// ProviderError is an answer from the provider refusing the request.
type ProviderError struct {
	Status  int
	Message string
}

// Error returns the provider's status and message.
func (e *ProviderError) Error() string {
	return fmt.Sprintf("provider answered %d: %s", e.Status, e.Message)
}

// Retryable reports whether the provider did nothing and asks to be called again later
// (a 5xx or 429): the same request, with the same key, may be sent again.
func (e *ProviderError) Retryable() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests
}

// Client calls the model provider.
type Client struct {
	// BaseURL is the provider's base URL.
	BaseURL string
	// HTTP is the client used; nil means one with a 60-second timeout.
	HTTP *http.Client
}

// DispatchRequest is what the provider is asked to do for one transaction. It is built
// from the transaction and its render-inputs snapshot only, so every request for one
// transaction has the same body, which the provider requires to honour the same key.
type DispatchRequest struct {
	TransactionID string       `json:"transaction_id"`
	Action        Kind         `json:"action"`
	JobID         int64        `json:"job_id"`
	CandidateID   int64        `json:"candidate_id"`
	InputsVersion int          `json:"render_inputs_version"`
	Instruction   string       `json:"instruction,omitempty"`
	Inputs        RenderInputs `json:"render_inputs"`
}

// DispatchResult is the provider's answer.
type DispatchResult struct {
	// ProviderJobID is the provider's id for the work.
	ProviderJobID string
	// Replayed says the provider answered from the first request with this key: no new work.
	Replayed bool
}

// Dispatch asks the provider to do the transaction's work, with an idempotency key derived
// from the transaction id. The worker, a second worker and the recovery job all send the
// same key for one transaction, so the provider does the work, and bills it, once.
//
//once:provider key=req.TransactionID prefix=paidaction ttl=24h
func (c *Client) Dispatch(ctx context.Context, req DispatchRequest) (DispatchResult, error) {
	key, ok := once.ProviderKeyFrom(ctx)
	if !ok {
		return DispatchResult{}, errors.New("dispatch: no provider idempotency key in the context")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return DispatchResult{}, fmt.Errorf("dispatch: encoding the request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+req.Action.path(), bytes.NewReader(body))
	if err != nil {
		return DispatchResult{}, fmt.Errorf("dispatch: %w", err)
	}
	// Without GetBody, net/http never resends the request by itself when a reused
	// connection breaks: a lost answer always reaches the worker, which records it as
	// unknown for the recovery job, whichever connection the request happened to use.
	hreq.GetBody = nil
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Idempotency-Key", key)
	resp, err := c.client().Do(hreq)
	if err != nil {
		return DispatchResult{}, fmt.Errorf("dispatch %s: %w: %w", req.TransactionID, ErrOutcomeUnknown, err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return DispatchResult{}, fmt.Errorf("dispatch %s: reading the answer: %w: %w", req.TransactionID, ErrOutcomeUnknown, err)
	}
	if resp.StatusCode == http.StatusConflict {
		return DispatchResult{}, fmt.Errorf("dispatch %s: a request with its key is still running: %w", req.TransactionID, ErrOutcomeUnknown)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal(payload, &e)
		return DispatchResult{}, fmt.Errorf("dispatch %s: %w", req.TransactionID, &ProviderError{Status: resp.StatusCode, Message: e.Error.Message})
	}
	var answer struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(payload, &answer); err != nil || answer.ID == "" {
		return DispatchResult{}, fmt.Errorf("dispatch %s: unreadable answer %q: %w", req.TransactionID, payload, ErrOutcomeUnknown)
	}
	return DispatchResult{ProviderJobID: answer.ID, Replayed: resp.Header.Get("Idempotent-Replayed") == "true"}, nil
}

func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

var defaultHTTP = &http.Client{Timeout: 60 * time.Second}
