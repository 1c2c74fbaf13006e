package outreach

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// SourcePlaces is the paid data source that finds creators in a city.
const SourcePlaces = "places"

// PlacesDailyCap is how many requests a day the app may make to the places source: its
// plan's budget. It is UseSource's cap= (a literal there, so the conflict clause and the
// index can be generated); the tests read it from here.
const PlacesDailyCap = 50

type importPayload struct {
	City string `json:"city"`
}

// UseSource reserves one of today's requests to a paid source, in one statement: adding
// one and checking the cap are the same conditional upsert, so no interleaving of workers
// can pass the cap. No lock is needed: no choice is made from a read, a unit is
// only taken from a count. No row back is the refusal.
//
//once:statement table=provider_days columns=provider,day counter=requests_used cap=50
func UseSource(ctx context.Context, tx pgx.Tx, provider string, day Day) (int64, error) {
	var used int64
	err := tx.QueryRow(ctx, `INSERT INTO provider_days (provider, day, requests_used) VALUES ($1, $2, 1) `+
		UseSourceConflict+` RETURNING requests_used`, provider, string(day)).Scan(&used)
	return used, once.InsertConflict(err)
}

// SearchPlaces asks the paid source for the creators in a city. The key is derived from
// the import job's row: a retry of the job (a lost answer) is the same request to the
// source, while the same city imported again next month is a new job and a new request.
// The source keeps keys for two hours.
//
//once:provider key=jobID prefix=place-import ttl=2h
func (a *App) SearchPlaces(ctx context.Context, jobID int64, city string) (string, error) {
	r, err := a.source.post(ctx, "/v1/places/search", importPayload{City: city})
	return r.ID, err
}

// FireBlockedAlert tells the operator that a paid source refuses the app's requests (it ran
// out of credit). It fires once per episode: the latch is set by the insert that fires it,
// and only a request that works again clears it (sourceWorked). A per-day guard here would
// repeat the same alert every midnight of a long outage, and say nothing about a second
// outage on the day the first one ended.
//
// The email is sent inside the latch's transaction: if it fails, the latch is rolled back
// and the next refused request fires again, because an alert that was not sent was not
// sent.
//
//once:episode table=provider_state columns=provider latch=block_notified_at
func (a *App) FireBlockedAlert(ctx context.Context, tx pgx.Tx, provider, cause string) error {
	if err := tx.QueryRow(ctx, `INSERT INTO provider_state (provider) VALUES ($1) `+
		FireBlockedAlertConflict+` RETURNING provider`, provider).Scan(new(string)); err != nil {
		return once.InsertConflict(err)
	}
	_, err := a.mail.send(ctx, Email{
		To:      a.cfg.Operator,
		Subject: "The " + provider + " source is refusing requests",
		Text:    "It answered: " + cause + "\nYou will hear again only after it has worked once more and failed again.",
		Tag:     "blocked",
	})
	return err
}

// sourceWorked ends a source's outage episode, if there was one: it clears the alert latch,
// so that the next outage alerts again. The statement does nothing when the latch is already clear,
// so it is safe after every request that works; the healthy set only saves the round trip
// for later requests in this process, for HealthHint.
//
// The set is a hint, never the guarantee. Another process can fire the latch while this
// one trusts its memory; the worst that does is rearm up to HealthHint late (an outage that
// starts again within that time of a recovery seen only elsewhere counts as the same
// episode). The guarantee, one alert per episode across every process, is the latch's
// WHERE clause.
func (a *App) sourceWorked(ctx context.Context, provider string) error {
	now := a.now()
	a.healthyMu.Lock()
	until, known := a.healthy[provider]
	seen := a.failures
	a.healthyMu.Unlock()
	if known && now.Before(until) {
		return nil
	}
	a.Stats.Rearms.Add(1)
	if _, err := a.db.Exec(ctx, `UPDATE provider_state SET block_notified_at = NULL
		WHERE provider = $1 AND block_notified_at IS NOT NULL`, provider); err != nil {
		return fmt.Errorf("rearming the %s alert: %w", provider, err)
	}
	a.healthyMu.Lock()
	// A failure seen by this process since the rearm may have fired the latch again: then
	// the hint would be wrong from the start, so it is not kept.
	if a.failures == seen {
		a.healthy[provider] = now.Add(a.cfg.HealthHint)
	}
	a.healthyMu.Unlock()
	return nil
}

// sourceBlocked forgets the hint (this process has just seen the source fail, so its next
// success must rearm) and fires the episode's alert, if it is armed.
func (a *App) sourceBlocked(ctx context.Context, provider string, cause error) error {
	a.healthyMu.Lock()
	delete(a.healthy, provider)
	a.failures++
	a.healthyMu.Unlock()
	if _, err := a.FireBlockedAlertOnce(ctx, a.db, provider, cause.Error()); err != nil {
		return fmt.Errorf("alerting that %s is blocked: %w", provider, err)
	}
	return nil
}

// importCity is the import job: one paid search for a city, within today's budget.
func (a *App) importCity(ctx context.Context, jobID int64, city string) error {
	now := a.now()
	_, out, err := UseSourceOnce(ctx, a.db, SourcePlaces, DayOf(now))
	if err != nil {
		return err
	}
	if out.Status == once.Refused {
		tomorrow := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		return &deferredError{until: tomorrow, reason: "today's budget of the places source is spent"}
	}
	ref, _, err := a.SearchPlacesOnce(ctx, jobID, city)
	if perr := (*ProviderError)(nil); errors.As(err, &perr) && perr.Status == http.StatusPaymentRequired {
		if aerr := a.sourceBlocked(ctx, SourcePlaces, perr); aerr != nil {
			return aerr // retried: the alert must go out
		}
		return &permanentError{err}
	}
	if err != nil {
		return err
	}
	if err := a.sourceWorked(ctx, SourcePlaces); err != nil {
		return err
	}
	_, err = a.db.Exec(ctx, `INSERT INTO imports (job_id, city, source_ref, imported_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (job_id) DO NOTHING`, jobID, city, ref, now)
	if err != nil {
		return fmt.Errorf("recording the import of %s: %w", city, err)
	}
	return nil
}
