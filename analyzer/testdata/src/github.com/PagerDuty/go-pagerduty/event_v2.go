// Package pagerduty is a stub of the PagerDuty API's events the tests call.
package pagerduty

import "context"

// V2Event is an alert event; PagerDuty groups the events of one DedupKey into one alert.
type V2Event struct {
	RoutingKey string
	Action     string
	DedupKey   string
}

// V2EventResponse is PagerDuty's answer.
type V2EventResponse struct{ DedupKey string }

// ManageEventWithContext sends e.
func ManageEventWithContext(ctx context.Context, e V2Event) (*V2EventResponse, error) {
	return &V2EventResponse{DedupKey: e.DedupKey}, nil
}
