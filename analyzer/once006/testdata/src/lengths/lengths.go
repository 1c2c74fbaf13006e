// Package lengths holds promises of the wrong length and table= functions whose insert
// is not their claim.
package lengths

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mrz1836/postmark"
	once "github.com/oncekit/once/runtime"
)

type App struct {
	pm   *postmark.Client
	pool *pgxpool.Pool
}

// Remind lasts one request around an email.
//
//once:request key=to
func (a *App) Remind(ctx context.Context, to string) error { // want `the //once:request promise on \(\*lengths.App\).Remind lasts one request, but it reaches \(\*postmark.Client\).SendEmail, which sends the email`
	_, err := a.pm.SendEmail(ctx, postmark.Email{To: to})
	return err
}

// Lookup memoises a read: what a request memo is for.
//
//once:request key=id
func (a *App) Lookup(ctx context.Context, id string) (string, error) { return id, nil }

func (a *App) guard(ctx context.Context, to string) {
	once.Request[struct{}]{Name: "lengths.limit"}.Do(ctx, to, func(ctx context.Context) (struct{}, error) { // want `the \(once.Request\).Do guard lasts one request, but it reaches \(\*postmark.Client\).SendEmail`
		_, err := a.pm.SendEmail(ctx, postmark.Email{To: to})
		return struct{}{}, err
	})
}

const StartConflict = "ON CONFLICT (org_id) WHERE status IN ('queued', 'running') DO NOTHING"

// Start claims a run by inserting it in the transaction the guard gives.
//
//once:open table=runs columns=org_id status=status open=queued,running
func (a *App) Start(ctx context.Context, tx pgx.Tx, org int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued') `+StartConflict, org)
	return err
}

// StartLoose inserts without the declared clause.
//
//once:open table=runs columns=org_id status=status open=queued,running
func (a *App) StartLoose(ctx context.Context, tx pgx.Tx, org int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued')`, org) // want `insert into runs does not use the conflict clause //once:open table=runs declares`
	return err
}

// StartElsewhere is given the guard's transaction and inserts through the pool.
//
//once:open table=runs columns=org_id status=status open=queued,running
func (a *App) StartElsewhere(ctx context.Context, tx pgx.Tx, org int64) error {
	_, err := a.pool.Exec(ctx, `INSERT INTO runs (org_id, status) VALUES ($1, 'queued') `+StartConflict, org) // want `insert into runs goes through a.pool, not the tx StartElsewhere is given`
	return err
}
