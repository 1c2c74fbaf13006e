package ideas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	once "github.com/oncekit/once/runtime"
)

// Model is the client of the paid research and model API. Every request it sends costs
// money, so it sends none without an idempotency key: a retry of the same work carries the
// same key, and the provider answers it from its records instead of billing again.
type Model struct {
	// BaseURL is the API's address (http://127.0.0.1:port for the local fake).
	BaseURL string
	// HTTP is the client to send with; nil means http.DefaultClient.
	HTTP *http.Client
}

// ErrNoProviderKey: a paid request was about to go out without an idempotency key. It is a
// programming error: every call site runs under a promise that puts a key in the context.
var ErrNoProviderKey = errors.New("ideas: paid request without an idempotency key")

// Findings is what the research API found for a run.
type Findings struct {
	// Ref is the provider's id of the research (the same on a replayed answer).
	Ref string `json:"ref"`
}

// Research pays the research API to study the market of run's organisation. Its provider
// key is derived from the run, so every attempt at the run (a retry after a lost answer, a
// second worker after a crash) asks for the same research and is billed once.
//
//once:provider key=run.ID prefix=research ttl=24h
func (m *Model) Research(ctx context.Context, run Run) (Findings, error) {
	ref, err := m.post(ctx, "/v1/research", map[string]any{"run": run.ID, "organisation": run.OrgID})
	return Findings{Ref: ref}, err
}

// IdeasPerRun is how many ideas a run produces.
const IdeasPerRun = 3

// Ideate pays the model to turn run's findings into ideas, keyed by the run like Research.
//
//once:provider key=run.ID prefix=ideate ttl=24h
func (m *Model) Ideate(ctx context.Context, run Run, f Findings) ([]string, error) {
	ref, err := m.post(ctx, "/v1/ideas", map[string]any{"run": run.ID, "findings": f.Ref})
	if err != nil {
		return nil, err
	}
	titles := make([]string, IdeasPerRun)
	for i := range titles {
		titles[i] = fmt.Sprintf("Idea %d of run %d (%s)", i+1, run.ID, ref)
	}
	return titles, nil
}

// refine pays the model to rewrite an idea's title along the note, with the provider key
// the caller's promise put in ctx.
func (m *Model) refine(ctx context.Context, idea Idea, note string) (string, error) {
	ref, err := m.post(ctx, "/v1/refine", map[string]any{"idea": idea.ID, "revision": idea.Revision, "note": note})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s, refined: %s (%s)", idea.Title, note, ref), nil
}

// post sends one paid request with the idempotency key in ctx and returns the provider's
// id for the work.
func (m *Model) post(ctx context.Context, path string, body any) (string, error) {
	key, ok := once.ProviderKeyFrom(ctx)
	if !ok {
		return "", fmt.Errorf("POST %s: %w", path, ErrNoProviderKey)
	}
	enc, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("POST %s: encoding the request: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(m.BaseURL, "/")+path, bytes.NewReader(enc))
	if err != nil {
		return "", fmt.Errorf("POST %s: %w", path, err)
	}
	// Without GetBody, net/http does not resend the request by itself when a kept-alive
	// connection drops before the answer: retries are the worker's decision, made with the
	// same key.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	client := m.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("POST %s: reading the answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("POST %s: the provider answered %s: %s", path, resp.Status, bytes.TrimSpace(payload))
	}
	var answer struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(payload, &answer); err != nil || answer.ID == "" {
		return "", fmt.Errorf("POST %s: unreadable answer %q", path, payload)
	}
	return answer.ID, nil
}
