// Package tables declares the table= forms: the promise lives on the package's own rows,
// and each function does the insert with the generated conflict clause, reporting its
// no-row as once.ErrConflict (once.InsertConflict).
package tables

import (
	"context"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// Job is a unit of queued work.
type Job struct {
	DedupeKey string
	Payload   string
}

// EnqueueJob queues a job unless one with the same key is pending or running.
//
//once:open table=jobs columns=dedupe_key status=status open=pending,running
func EnqueueJob(ctx context.Context, tx pgx.Tx, job Job) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, "INSERT INTO jobs (dedupe_key, payload, status) VALUES ($1, $2, 'pending') "+
		EnqueueJobConflict+" RETURNING id", job.DedupeKey, job.Payload).Scan(&id)
	return id, once.InsertConflict(err)
}

// RecordCharge records an org's charge for a day, once for ever.
//
//once:forever table=billing.charges columns=org_id,day nulls=notdistinct name=tables.charge
func RecordCharge(ctx context.Context, tx pgx.Tx, org int64, day string) error {
	return once.InsertConflict(tx.QueryRow(ctx, "INSERT INTO billing.charges (org_id, day) VALUES ($1, $2) "+
		RecordChargeConflict+" RETURNING org_id", org, day).Scan(new(int64)))
}

// FireAlert fires a rule's alert once per episode.
//
//once:episode table=alerts columns=rule_id latch=fired_at
func FireAlert(ctx context.Context, tx pgx.Tx, rule string) error {
	return once.InsertConflict(tx.QueryRow(ctx, "INSERT INTO alerts (rule_id) VALUES ($1) "+FireAlertConflict+" RETURNING rule_id", rule).Scan(new(string)))
}

// UseQuota spends n units of an org's daily quota of 100.
//
//once:statement table=quota columns=org_id,day counter=used cap=100
func UseQuota(ctx context.Context, tx pgx.Tx, org int64, day string, n int64) (int64, error) {
	var used int64
	err := tx.QueryRow(ctx, "INSERT INTO quota (org_id, day, used) VALUES ($1, $2, $3) "+UseQuotaConflict+" RETURNING used", org, day, n).Scan(&used)
	return used, once.InsertConflict(err)
}

// RecordPreference records a notification preference once for ever. Its index name is over
// PostgreSQL's 63 bytes, so oncegen shortens it with a stable hash.
//
//once:forever table=customer_notification_preferences_history columns=organisation_identifier,notification_channel_name
func RecordPreference(ctx context.Context, tx pgx.Tx, org int64, channel string) error {
	return once.InsertConflict(tx.QueryRow(ctx, "INSERT INTO customer_notification_preferences_history (organisation_identifier, notification_channel_name) VALUES ($1, $2) "+
		RecordPreferenceConflict+" RETURNING organisation_identifier", org, channel).Scan(new(int64)))
}
