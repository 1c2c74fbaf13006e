// Package jobs queues jobs and memoizes per-request work. // want package:"once002"
package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/openai/openai-go/v3"
	stripe "github.com/stripe/stripe-go/v82"

	once "github.com/oncekit/once/runtime"
)

type Store struct {
	db      *pgxpool.Pool
	ai      openai.Client
	sc      *stripe.Client
	mailURL string
}

// EnqueueJob queues a job while no job with its key is open.
//
//once:open table=jobs columns=dedupe_key status=status open=pending,running
func (s *Store) EnqueueJob(ctx context.Context, tx pgx.Tx, key string) error {
	_, err := tx.Exec(ctx, `INSERT INTO jobs (dedupe_key, status) VALUES ($1, 'pending') ON CONFLICT (dedupe_key) DO NOTHING`, key) // want `insert into jobs does not use the conflict clause //once:open table=jobs declares: without "ON CONFLICT \(dedupe_key\) WHERE status IN \('pending', 'running'\) DO NOTHING"`
	return err
}

// EnqueueReport repeats the declared clause through the generated constant.
//
//once:open table=reports columns=submission_id status=state open=queued
func (s *Store) EnqueueReport(ctx context.Context, tx pgx.Tx, submission int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO reports (submission_id, state) VALUES ($1, 'queued') `+EnqueueReportConflict, submission)
	return err
}

// Summary memoizes a paid model call for the request only: the next request pays again.
//
//once:request key=orgID
func (s *Store) Summary(ctx context.Context, orgID int64) (string, error) { // want `the //once:request promise on Summary lasts one request, but it calls \(openai.Client\).Chat.Completions.New: the next request \(a retry, a second tab\) runs \(and bills\) the completion again`
	c, err := s.ai.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o})
	if err != nil {
		return "", err
	}
	return c.Choices[0].Message.Content, nil
}

// Plan memoizes a read for the request: what the request promise is for.
//
//once:request key=orgID
func (s *Store) Plan(ctx context.Context, orgID int64) (string, error) {
	var plan string
	err := s.db.QueryRow(ctx, `SELECT plan FROM orgs WHERE id = $1`, orgID).Scan(&plan)
	return plan, err
}

// Upgrade charges inside a request-scoped guard.
func (s *Store) Upgrade(ctx context.Context, orgID int64) error { // want Upgrade:"keyParam\\(orgID\\)"
	_, _, err := once.Request[string]{Name: "runs.upgrade"}.Do(ctx, fmt.Sprint(orgID), func(ctx context.Context) (string, error) { // want `once.Request guard lasts one request, but it calls \(\*stripe.Client\).V1Charges.Create`
		c, err := s.sc.V1Charges.Create(ctx, &stripe.ChargeCreateParams{Amount: stripe.Int64(900)})
		if err != nil {
			return "", err
		}
		return c.ID, nil
	})
	return err
}

// LimitReached tells the user once per request that the month's runs are used up: the
// next refused request emails again.
func (s *Store) LimitReached(ctx context.Context, orgID int64, email string) error {
	_, err := once.RequestFunc{Name: "jobs.limit"}.Do(ctx, "limit", func(ctx context.Context) error { // want `^once.Request guard lasts one request, but it calls http.Post: the next request \(a retry, a second tab\) sends the POST again`
		body, _ := json.Marshal(map[string]string{"to": email, "subject": "This month's runs are used up"})
		resp, err := http.Post(s.mailURL+"/v1/emails", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
	return err
}

// Welcome memoizes the welcome email for the request, through a helper.
//
//once:request key=orgID
func (s *Store) Welcome(ctx context.Context, orgID int64, email string) error { // want `^the //once:request promise on Welcome lasts one request, but it calls \(\*jobs.Store\).mail, which reaches http.Post: the next request`
	return s.mail(email, "Welcome")
}

func (s *Store) mail(to, subject string) error {
	body, _ := json.Marshal(map[string]string{"to": to, "subject": subject})
	resp, err := http.Post(s.mailURL+"/v1/emails", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
