package naive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/oncekit/once/examples/paidactions"
)

// Attempts is how many times the naive worker tries the provider before giving up.
const Attempts = 3

// Worker carries out queued actions, the naive way.
type Worker struct {
	Store *Store
	// ProviderURL is the model provider's base URL.
	ProviderURL string
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
}

// Step takes the oldest queued action and carries it out, retrying the provider on any
// error. It reports whether there was an action to take.
func (w *Worker) Step(ctx context.Context) (bool, error) {
	t := paidactions.Transaction{}
	err := w.Store.DB.QueryRow(ctx, `UPDATE paid_actions SET status = 'dispatching', dispatched_at = now()
WHERE transaction_id = (SELECT transaction_id FROM paid_actions WHERE status = 'queued'
	ORDER BY created_at, transaction_id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING transaction_id::text, account_id, job_id, action, candidate_id, inputs_version, instruction`).
		Scan(&t.ID, &t.Account, &t.JobID, &t.Action, &t.CandidateID, &t.RenderInputsVersion, &t.Instruction)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("taking a paid action: %w", err)
	}
	snap, err := paidactions.LoadSnapshot(ctx, w.Store.DB, t.JobID, t.RenderInputsVersion)
	if err != nil {
		return true, err
	}
	inputs, err := paidactions.Hydrate(snap, t.Action)
	if err != nil {
		return true, err
	}
	body, err := json.Marshal(paidactions.DispatchRequest{TransactionID: t.ID, Action: t.Action, JobID: t.JobID,
		CandidateID: t.CandidateID, InputsVersion: t.RenderInputsVersion, Instruction: t.Instruction, Inputs: inputs})
	if err != nil {
		return true, err
	}
	var last error
	for attempt := 1; attempt <= Attempts; attempt++ {
		jobID, err := w.dispatch(ctx, t, attempt, body)
		if err == nil {
			_, err = w.Store.DB.Exec(ctx, `UPDATE paid_actions SET status = 'succeeded', provider_job_id = $2,
	provider_requests = $3, settled_at = now() WHERE transaction_id = $1`, t.ID, jobID, attempt)
			return true, err
		}
		last = err
	}
	_, err = w.Store.DB.Exec(ctx, `UPDATE paid_actions SET status = 'failed', error = $2, provider_requests = $3
WHERE transaction_id = $1`, t.ID, last.Error(), Attempts)
	return true, errors.Join(last, err)
}

// dispatch sends one attempt to the provider. Its cost is entered in the ledger as the
// request goes out, one entry per attempt, and its idempotency key is new every time.
func (w *Worker) dispatch(ctx context.Context, t paidactions.Transaction, attempt int, body []byte) (string, error) {
	if _, err := w.Store.DB.Exec(ctx, `INSERT INTO cost_ledger
	(transaction_id, account_id, provider, amount_usd_micros, provider_job_id, provider_requests)
VALUES ($1, $2, $3, $4, '', $5)`, t.ID, t.Account, paidactions.ProviderName, t.Action.Price(), attempt); err != nil {
		return "", fmt.Errorf("recording the spend: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(w.ProviderURL, "/")+"/v1/"+string(t.Action), bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.GetBody = nil // as in the editor: a lost answer reaches this code
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", requestID()) // ONCE002: a new key on every attempt, so a retry is new work
	client := w.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("calling the provider: %w", err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading the provider's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("provider answered %d: %s", resp.StatusCode, payload)
	}
	var answer struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(payload, &answer); err != nil {
		return "", fmt.Errorf("reading the provider's answer: %w", err)
	}
	return answer.ID, nil
}
