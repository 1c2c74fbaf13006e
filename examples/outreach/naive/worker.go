package naive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// Worker runs queued jobs, as outreach.Worker does.
type Worker struct{ app *App }

// Worker returns a worker for the app's queue.
func (a *App) Worker() *Worker { return &Worker{app: a} }

// Step claims one due job and runs it; it reports whether there was one.
func (w *Worker) Step(ctx context.Context) (bool, error) {
	a := w.app
	now := a.now()
	var id int64
	var attempts int
	var kind string
	var payload json.RawMessage
	err := a.db.QueryRow(ctx, `
		UPDATE jobs SET status = 'running', attempts = attempts + 1
		WHERE id = (SELECT id FROM jobs WHERE status = 'pending' AND run_after <= $1
		            ORDER BY run_after, id FOR UPDATE SKIP LOCKED LIMIT 1)
		RETURNING id, kind, payload, attempts`, now).Scan(&id, &kind, &payload, &attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	status, runAfter, lastErr := "done", now, ""
	switch err := w.run(ctx, id, kind, payload); {
	case errors.Is(err, errBudgetSpent):
		status, runAfter, lastErr = "pending", now.Add(24*time.Hour), err.Error()
	case err != nil && attempts >= 5:
		status, lastErr = "failed", err.Error()
	case err != nil:
		status, runAfter, lastErr = "pending", now, err.Error()
	}
	_, err = a.db.Exec(ctx, `UPDATE jobs SET status = $2, run_after = $3, last_error = nullif($4, '') WHERE id = $1`,
		id, status, runAfter, lastErr)
	return true, err
}

// Drain steps until no job is due, and returns how many jobs it ran.
func (w *Worker) Drain(ctx context.Context) (int, error) {
	n := 0
	for {
		ran, err := w.Step(ctx)
		if err != nil || !ran {
			return n, err
		}
		n++
	}
}

func (w *Worker) run(ctx context.Context, id int64, kind string, payload json.RawMessage) error {
	var p struct {
		ID   int64  `json:"id"`
		City string `json:"city"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return err
	}
	switch kind {
	case "send_outreach":
		return w.app.sendOutreach(ctx, p.ID)
	case "import":
		return w.app.importCity(ctx, p.City)
	}
	return fmt.Errorf("unknown job kind %q", kind)
}

// sendOutreach emails a creator the campaign's pitch, with no idempotency key.
func (a *App) sendOutreach(ctx context.Context, threadID int64) error {
	var to, campaign, pitch string
	err := a.db.QueryRow(ctx, `SELECT cr.email, c.name, c.pitch FROM outreach_threads t
		JOIN campaigns c ON c.id = t.campaign_id JOIN creators cr ON cr.id = t.creator_id WHERE t.id = $1`, threadID).Scan(&to, &campaign, &pitch)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"to": to, "subject": campaign, "text": pitch, "tag": "outreach"})
	resp, err := http.Post(a.cfg.MailURL+"/v1/emails", "application/json", bytes.NewReader(body)) // ONCE001: a retried job sends the email again
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("email API answered %d", resp.StatusCode)
	}
	return nil
}

var errBudgetSpent = errors.New("naive: today's budget of the places source is spent")

// importCity reads today's count of paid requests, compares it with the budget, counts one
// more and asks the source.
func (a *App) importCity(ctx context.Context, city string) error {
	today := day(a.now())
	var used int64
	err := a.db.QueryRow(ctx, `SELECT coalesce((SELECT requests_used FROM provider_days WHERE provider = 'places' AND day = $1), 0)`, today).Scan(&used)
	if err != nil {
		return err
	}
	if used >= PlacesDailyCap {
		return errBudgetSpent
	}
	a.cfg.Hooks.checked("budget")
	const countOne = `INSERT INTO provider_days (provider, day, requests_used) VALUES ('places', $1, 1)
		ON CONFLICT (provider, day) DO UPDATE SET requests_used = provider_days.requests_used + 1`
	if _, err := a.db.Exec(ctx, countOne, today); err != nil { // ONCE005: two workers both read room under the cap, both add one
		return err
	}
	body, _ := json.Marshal(map[string]string{"city": city})
	resp, err := http.Post(a.cfg.SourceURL+"/v1/places/search", "application/json", bytes.NewReader(body)) // ONCE001: a retried job pays for the search again
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusPaymentRequired {
		return a.alertBlocked(ctx, today)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("places source answered %d", resp.StatusCode)
	}
	return nil
}

// alertBlocked tells the operator the source refuses requests, at most once a day.
func (a *App) alertBlocked(ctx context.Context, today string) error {
	err := a.db.QueryRow(ctx, `INSERT INTO alert_days (provider, day) VALUES ('places', $1)
		ON CONFLICT DO NOTHING RETURNING provider`, today).Scan(new(string))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // already told today
	}
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"to": a.cfg.Operator, "subject": "The places source is refusing requests", "tag": "blocked"})
	resp, err := http.Post(a.cfg.MailURL+"/v1/emails", "application/json", bytes.NewReader(body)) // ONCE001: a retry alerts again
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
