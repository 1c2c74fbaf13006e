// Package oncall pages and notifies from HTTP handlers: through a notification library,
// with nothing deduplicating, and through PagerDuty, whose dedup key groups a repeat.
package oncall

import (
	"net/http"

	"github.com/PagerDuty/go-pagerduty"
	"github.com/containrrr/shoutrrr"
)

// Notify posts the text to the configured service on every request.
func Notify(w http.ResponseWriter, r *http.Request) {
	shoutrrr.Send("slack://token@channel", r.FormValue("text")) // want `call of shoutrrr.Send sends the notification with no //once: promise`
}

// Page sends an alert event keyed by the incident the request names: PagerDuty folds a
// repeat into the same alert.
func Page(w http.ResponseWriter, r *http.Request) {
	pagerduty.ManageEventWithContext(r.Context(), pagerduty.V2Event{
		RoutingKey: "routing",
		Action:     "trigger",
		DedupKey:   r.FormValue("incident"),
	})
}

// PageUnkeyed sends an alert event with no dedup key: every repeat opens another alert.
func PageUnkeyed(w http.ResponseWriter, r *http.Request) {
	pagerduty.ManageEventWithContext(r.Context(), pagerduty.V2Event{RoutingKey: "routing", Action: "trigger"}) // want `call of pagerduty.ManageEventWithContext sends the alert event with no //once: promise and no idempotency key`
}
