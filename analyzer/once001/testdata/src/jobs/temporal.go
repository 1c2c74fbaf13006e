package jobs

import (
	"context"
	"time"

	"github.com/go-pkgz/repeater/v2"
	"github.com/mrz1836/postmark"
	"go.temporal.io/sdk/worker"
)

// Activities are Temporal activities registered as a struct: each exported method is one.
type Activities struct{ pm *postmark.Client }

func (a *Activities) SendInvoice(ctx context.Context, to string) error {
	_, err := a.pm.SendEmail(ctx, postmark.Email{To: to, Subject: "invoice"}) // want `sends the email with no //once: promise, on a path that runs it again`
	return err
}

// Remind is registered on its own.
func Remind(ctx context.Context, to string) error {
	_, err := (&postmark.Client{}).SendEmail(ctx, postmark.Email{To: to, Subject: "reminder"}) // want `sends the email with no //once: promise, on a path that runs it again`
	return err
}

// Draft has an activity's shape, but no worker registers it.
func Draft(ctx context.Context, to string) error {
	_, err := (&postmark.Client{}).SendEmail(ctx, postmark.Email{To: to, Subject: "draft"})
	return err
}

// Register hands the activities to a worker.
func Register(w worker.Worker, a *Activities) {
	w.RegisterActivity(a)
	w.RegisterActivityWithOptions(Remind, worker.RegisterOptions{Name: "remind"})
}

// Mail sends through a repeater that calls again after any error.
func Mail(ctx context.Context, pm *postmark.Client, to string) error {
	return repeater.NewFixed(5, 250*time.Millisecond).Do(ctx, func() error {
		_, err := pm.SendEmail(ctx, postmark.Email{To: to, Subject: "hello"}) // want `sends the email with no //once: promise, on a path that runs it again`
		return err
	})
}
