// Package fake is a sink that only records, for demos.
package fake

import (
	"context"

	"example.com/plugins/notify"
)

// Recorder keeps the alerts it is given.
type Recorder struct{ Alerts []string }

func init() { notify.Register(&Recorder{}) }

// Deliver records the alert.
func (r *Recorder) Deliver(ctx context.Context, alert string) error {
	r.Alerts = append(r.Alerts, alert)
	return nil
}
