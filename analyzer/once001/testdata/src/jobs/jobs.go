// Package jobs runs effects from a cron callback, a River worker and a retry helper.
package jobs

import (
	"context"

	"github.com/cenkalti/backoff/v4"
	"github.com/mrz1836/postmark"
	"github.com/riverqueue/river"
	"github.com/robfig/cron/v3"
)

type Digest struct{ pm *postmark.Client }

func (d *Digest) send() {
	d.pm.SendEmail(context.Background(), postmark.Email{To: "team", Subject: "digest"}) // want `call of \(\*postmark.Client\).SendEmail sends the email with no //once: promise, on a path that runs it again`
}

// Schedule registers the digest with cron: every replica runs it.
func Schedule(d *Digest) {
	c := cron.New()
	c.AddFunc("@daily", d.send)
	c.AddFunc("@hourly", func() {
		d.pm.SendEmail(context.Background(), postmark.Email{To: "ops", Subject: "hourly"}) // want `call of \(\*postmark.Client\).SendEmail sends the email`
	})
}

type WelcomeArgs struct{ Email string }

func (WelcomeArgs) Kind() string { return "welcome" }

type WelcomeWorker struct{ pm *postmark.Client }

// Work is run again when it fails or times out.
func (w *WelcomeWorker) Work(ctx context.Context, job *river.Job[WelcomeArgs]) error {
	_, err := w.pm.SendEmail(ctx, postmark.Email{To: job.Args.Email, Subject: "welcome"}) // want `call of \(\*postmark.Client\).SendEmail sends the email with no //once: promise, on a path that runs it again`
	return err
}

// Notify retries the send with backoff.
func Notify(pm *postmark.Client, to string) error {
	return backoff.Retry(func() error {
		_, err := pm.SendEmail(context.Background(), postmark.Email{To: to}) // want `call of \(\*postmark.Client\).SendEmail sends the email`
		return err
	}, backoff.NewExponentialBackOff())
}
