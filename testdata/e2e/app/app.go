// Package app declares one guard of every kind over functions whose effects are rows (or
// calls to a fake provider), so a storm of concurrent calls can count what happened.
package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	once "github.com/oncekit/once/runtime"
)

// Pool is where the effects are recorded.
var Pool *pgxpool.Pool

// Hold, when set, keeps a function running until the rest of its storm has arrived, so an
// open claim or a lease is still held while every other call is made.
var Hold func()

// Gap, when set, runs in Approve between its read and its write: the window a decision made
// from a read leaves open, which the transaction guard must close.
var Gap func()

// ProviderURL is the fake provider's address.
var ProviderURL string

// Conflicts are the clauses the table= inserts use; the negative control blanks them.
var Conflicts = map[string]string{
	"jobs":    EnqueueJobConflict,
	"charges": RecordChargeConflict,
	"alerts":  FireAlertConflict,
	"quota":   UseQuotaConflict,
}

func effect(ctx context.Context, kind, key string) error {
	if Hold != nil {
		Hold()
	}
	_, err := Pool.Exec(ctx, "INSERT INTO effects (kind, key) VALUES ($1, $2)", kind, key)
	return err
}

// Org is a tenant.
type Org struct{ ID string }

// LoadProfile is memoised per request.
//
//once:request key=org.ID
func LoadProfile(ctx context.Context, org Org) (string, error) {
	return "profile-" + org.ID, effect(ctx, "request", org.ID)
}

// Approve decides from a read: approve an org once.
//
//once:transaction key=org.ID
func Approve(ctx context.Context, tx pgx.Tx, org Org) error {
	var n int
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM decisions WHERE org = $1", org.ID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if Gap != nil {
		Gap()
	}
	if _, err := tx.Exec(ctx, "INSERT INTO decisions (org, approved) VALUES ($1, true)", org.ID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, "INSERT INTO effects (kind, key) VALUES ('transaction', $1)", org.ID)
	return err
}

// Generate spends one unit of a daily quota of one.
//
//once:statement key=org.ID,day cap=1 name=app.generate
func Generate(ctx context.Context, org Org, day string) error {
	return effect(ctx, "statement", org.ID+"/"+day)
}

// Alert fires once per outage.
//
//once:episode key=source
func Alert(ctx context.Context, source string) error { return effect(ctx, "episode", source) }

// StartRun starts one run per org while it is open.
//
//once:open key=org.ID
func StartRun(ctx context.Context, org Org) (string, error) {
	return "run-" + org.ID, effect(ctx, "open", org.ID)
}

// Welcome sends the welcome mail once for ever, and returns a receipt.
//
//once:forever key=user
func Welcome(ctx context.Context, user int64) (string, error) {
	return fmt.Sprintf("mail-%d", user), effect(ctx, "forever", fmt.Sprint(user))
}

// Charge asks the provider to charge, with the provider's idempotency key.
//
//once:provider key=order prefix=charge
func Charge(ctx context.Context, order string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ProviderURL, bytes.NewReader([]byte(order)))
	if err != nil {
		return err
	}
	if k, ok := once.ProviderKeyFrom(ctx); ok {
		req.Header.Set("Idempotency-Key", k)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Reconcile runs on one holder at a time.
//
//once:lease key=shard ttl=30s
func Reconcile(ctx context.Context, shard string) error { return effect(ctx, "lease", shard) }

// EnqueueJob queues a job unless one with the same key is pending or running; then it
// names that job, so the caller is sent to it.
//
//once:open table=jobs columns=dedupe_key status=status open=pending,running
func EnqueueJob(ctx context.Context, tx pgx.Tx, key string) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, "INSERT INTO jobs (dedupe_key, status) VALUES ($1, 'pending') "+Conflicts["jobs"]+" RETURNING id", key).Scan(&id)
	if !errors.Is(err, pgx.ErrNoRows) {
		return id, err
	}
	var open int64
	if err := tx.QueryRow(ctx, "SELECT id FROM jobs WHERE dedupe_key = $1 AND status IN ('pending', 'running')", key).Scan(&open); err != nil {
		return 0, err
	}
	return 0, once.Conflict(strconv.FormatInt(open, 10))
}

// RecordCharge records an org's charge for a day once for ever, a NULL day included.
//
//once:forever table=billing.charges columns=org_id,day nulls=notdistinct
func RecordCharge(ctx context.Context, tx pgx.Tx, org int64, day *string) error {
	return once.InsertConflict(tx.QueryRow(ctx, "INSERT INTO billing.charges (org_id, day) VALUES ($1, $2) "+Conflicts["charges"]+" RETURNING org_id", org, day).Scan(new(int64)))
}

// FireAlert fires a rule's alert once per episode.
//
//once:episode table=alerts columns=rule_id latch=fired_at
func FireAlert(ctx context.Context, tx pgx.Tx, rule string) error {
	return once.InsertConflict(tx.QueryRow(ctx, "INSERT INTO alerts (rule_id) VALUES ($1) "+Conflicts["alerts"]+" RETURNING rule_id", rule).Scan(new(string)))
}

// UseQuota spends n units of an org's daily quota of 100.
//
//once:statement table=quota columns=org_id,day counter=used cap=100
func UseQuota(ctx context.Context, tx pgx.Tx, org int64, day string, n int64) (int64, error) {
	var used int64
	err := tx.QueryRow(ctx, "INSERT INTO quota (org_id, day, used) VALUES ($1, $2, $3) "+Conflicts["quota"]+" RETURNING used", org, day, n).Scan(&used)
	return used, once.InsertConflict(err)
}
