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
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Worker carries out queued runs, paying the research API and the model.
type Worker struct {
	db   *pgxpool.Pool
	api  string
	http *http.Client

	// MaxAttempts is how many attempts a job gets; zero means 3.
	MaxAttempts int
	// BeforeIdeate, when set, runs after the research and before the ideas call.
	BeforeIdeate func()
}

// NewWorker returns a worker over db, spending on the API at baseURL.
func NewWorker(db *pgxpool.Pool, baseURL string) *Worker {
	return &Worker{db: db, api: strings.TrimSuffix(baseURL, "/"), http: &http.Client{}}
}

// Step takes the next queued job, if any, and tries it once. It reports false when no job
// was queued.
func (w *Worker) Step(ctx context.Context) (bool, error) {
	var job, run int64
	var attempts int
	err := w.db.QueryRow(ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1
		WHERE id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1)
		RETURNING id, run_id, attempts`).Scan(&job, &run, &attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("naive: taking a job: %w", err)
	}
	state := "done"
	if err := w.handle(ctx, run); err != nil {
		state = "queued"
		max := w.MaxAttempts
		if max == 0 {
			max = 3
		}
		if attempts >= max {
			// The queue gives up; the run is left saying whatever it said last.
			state = "failed"
		}
	}
	if _, err := w.db.Exec(ctx, `UPDATE jobs SET state = $2 WHERE id = $1`, job, state); err != nil {
		return true, fmt.Errorf("naive: settling job %d: %w", job, err)
	}
	return true, nil
}

func (w *Worker) handle(ctx context.Context, run int64) error {
	if _, err := w.db.Exec(ctx, `UPDATE runs SET status = 'researching' WHERE id = $1`, run); err != nil {
		return err
	}
	findings, err := w.research(ctx, run)
	if err != nil {
		return err
	}
	if w.BeforeIdeate != nil {
		w.BeforeIdeate()
	}
	titles, err := w.ideate(ctx, run, findings)
	if err != nil {
		return err
	}
	for _, t := range titles {
		if _, err := w.db.Exec(ctx, `INSERT INTO ideas (run_id, title) VALUES ($1, $2)`, run, t); err != nil {
			return err
		}
	}
	_, err = w.db.Exec(ctx, `UPDATE runs SET status = 'completed', finished_at = now() WHERE id = $1`, run)
	return err
}

// research pays for the run's research, with no idempotency key.
func (w *Worker) research(ctx context.Context, run int64) (string, error) {
	body, _ := json.Marshal(map[string]any{"run": run})
	resp, err := w.http.Post(w.api+"/v1/research", "application/json", bytes.NewReader(body)) // ONCE001: no key
	if err != nil {
		return "", fmt.Errorf("naive: research: %w", err)
	}
	return answer(resp)
}

// ideate pays the model for the run's ideas, with a key that changes on every attempt.
func (w *Worker) ideate(ctx context.Context, run int64, findings string) ([]string, error) {
	body, _ := json.Marshal(map[string]any{"run": run, "findings": findings})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.api+"/v1/ideas", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	// As in the real app, net/http may not resend the request by itself: retries are the
	// worker's, so the test counts what the worker does.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprintf("ideas-%d-%d", run, time.Now().UnixNano())) // ONCE002: a new key each attempt
	resp, err := w.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("naive: ideas: %w", err)
	}
	ref, err := answer(resp)
	if err != nil {
		return nil, err
	}
	return []string{"Idea 1 (" + ref + ")", "Idea 2 (" + ref + ")", "Idea 3 (" + ref + ")"}, nil
}

func answer(resp *http.Response) (string, error) {
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("naive: the provider answered %s", resp.Status)
	}
	var a struct{ ID string }
	if err := json.Unmarshal(payload, &a); err != nil {
		return "", err
	}
	return a.ID, nil
}
