package outreach

import (
	"context"
	"errors"
	"fmt"
	"time"

	once "github.com/oncekit/once/runtime"
)

// Digest is one user's summary of a day's answers.
type Digest struct {
	UserID  int64
	Email   string
	Day     Day
	Replies int
}

// SendDigests sends the day's digest to every user who got answers that day. Every
// instance's worker ticks, and one at a time walks the users: the lease expires by itself
// if its holder is killed mid-walk, and the next tick takes over. The lease only saves the
// duplicate walk; each digest's own promise is SendDigest's.
//
//once:lease key=day ttl=1m
func (a *App) SendDigests(ctx context.Context, day Day) (int, error) {
	start, err := time.Parse(time.DateOnly, string(day))
	if err != nil {
		return 0, fmt.Errorf("digest day %q: %w", day, err)
	}
	rows, err := a.db.Query(ctx, `
		SELECT u.id, u.email, count(*)
		FROM inbound_emails i
		JOIN outreach_threads t ON t.id = i.thread_id
		JOIN users u ON u.id = t.user_id
		WHERE i.received_at >= $1 AND i.received_at < $2
		GROUP BY u.id, u.email ORDER BY u.id`, start, start.AddDate(0, 0, 1))
	if err != nil {
		return 0, fmt.Errorf("listing %s's digests: %w", day, err)
	}
	var digests []Digest
	for rows.Next() {
		d := Digest{Day: day}
		if err := rows.Scan(&d.UserID, &d.Email, &d.Replies); err != nil {
			return 0, fmt.Errorf("listing %s's digests: %w", day, err)
		}
		digests = append(digests, d)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("listing %s's digests: %w", day, err)
	}
	sent := 0
	for _, d := range digests {
		out, err := a.SendDigestOnce(ctx, a.db, d)
		if err != nil {
			return sent, err
		}
		if out.Ran() {
			sent++
		}
	}
	return sent, nil
}

// SendDigest emails one user their digest of one day, once for ever (the record is kept
// for a month, longer than anyone re-runs a day). The email carries the operation's own
// provider key, so a worker killed between the send and the record, whose claim is taken
// over as safe to repeat, sends the same key again and the provider sends one email.
//
//once:forever key=d.UserID,d.Day retain=720h repeat=safe
func (a *App) SendDigest(ctx context.Context, d Digest) error {
	if att, ok := once.AttemptFrom(ctx); ok {
		ctx = once.WithProviderKey(ctx, att.ProviderKey("digest"))
	}
	_, err := a.mail.send(ctx, Email{
		To:      d.Email,
		Subject: fmt.Sprintf("%d answers on %s", d.Replies, d.Day),
		Text:    "Open the app to read them.",
		Tag:     "digest",
	})
	return err
}

// Tick does the worker's scheduled work: yesterday's digests. A tick that finds another
// instance walking them does nothing.
func (w *Worker) Tick(ctx context.Context) (sent int, err error) {
	day := DayOf(w.app.now().AddDate(0, 0, -1))
	sent, _, err = w.app.SendDigestsOnce(ctx, w.app.db, day)
	if errors.Is(err, once.ErrBusy) {
		return 0, nil
	}
	return sent, err
}
