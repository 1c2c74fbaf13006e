// Package notify sends an alert to every sink registered with it. It imports none of
// them: the sinks register themselves.
package notify

import "context"

// Sink delivers an alert.
type Sink interface {
	Deliver(ctx context.Context, alert string) error
}

var sinks []Sink

// Register adds a sink.
func Register(s Sink) { sinks = append(sinks, s) }

// Dispatch delivers the alert to every sink.
func Dispatch(ctx context.Context, alert string) {
	for _, s := range sinks {
		_ = deliver(ctx, s, alert)
	}
}

// deliver delivers the alert to one sink, trying again when it fails.
func deliver(ctx context.Context, s Sink, alert string) (err error) {
	for attempt := 0; attempt < 3; attempt++ {
		if err = s.Deliver(ctx, alert); err == nil {
			return nil
		}
	}
	return err
}

// Test delivers the alert once to each sink, as an operator's test button does.
func Test(ctx context.Context, alert string) {
	for _, s := range sinks {
		_ = s.Deliver(ctx, alert)
	}
}

// Page delivers the alert to every sink; a repeat is what paging means.
func Page(ctx context.Context, alert string) {
	for _, s := range sinks {
		page(ctx, s, alert)
	}
}

// page delivers the alert to one sink again and again until the sink takes it.
func page(ctx context.Context, s Sink, alert string) {
	for s.Deliver(ctx, alert) != nil { //oncelint:ignore ONCE001 paging repeats until a pager takes it
	}
}

// Escalate delivers an incident to the first sink, trying again when it fails, once per
// incident: the promise covers whatever the sink does.
//
//once:forever key=incident
func Escalate(ctx context.Context, incident string) (err error) {
	for attempt := 0; attempt < 3; attempt++ {
		if err = sinks[0].Deliver(ctx, incident); err == nil {
			return nil
		}
	}
	return err
}
