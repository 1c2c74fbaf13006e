// Package ticker sends from loops a timer turns, the hand-written schedulers of a service,
// and from loops that only pace a walk over a list.
package ticker

import (
	"context"
	"time"

	"github.com/containrrr/shoutrrr"
)

type alert struct {
	url, text string
	sent      bool
}

// notify sends one alert and marks it sent only when the send returned no error.
func notify(a *alert) {
	if err := shoutrrr.Send(a.url, a.text); err != nil { // want `call of shoutrrr.Send sends the notification with no //once: promise`
		return
	}
	a.sent = true
}

// Watch sends the pending alerts at every tick: a send that failed after the service took
// it is sent again at the next.
func Watch(ctx context.Context, pending func() []*alert) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, a := range pending() {
			if !a.sent {
				notify(a)
			}
		}
	}
}

// Poll is the same scheduler written with a sleep.
func Poll(pending func() []*alert) {
	for {
		for _, a := range pending() {
			shoutrrr.Send(a.url, a.text) // want `call of shoutrrr.Send sends the notification with no //once: promise`
		}
		time.Sleep(30 * time.Second)
	}
}

// Every sends a digest on each tick of a range over time.Tick.
func Every(url string, digest func() string) {
	for range time.Tick(time.Hour) {
		shoutrrr.Send(url, digest()) // want `call of shoutrrr.Send sends the notification with no //once: promise`
	}
}

// Paced sends each alert of a list once, sleeping between two sends to keep under a rate
// limit: the sleep paces the walk, and nothing turns the loop again.
func Paced(alerts []*alert) {
	for _, a := range alerts {
		shoutrrr.Send(a.url, a.text)
		time.Sleep(100 * time.Millisecond)
	}
}

// Drain sends each alert handed over a channel of work, pacing the sends: a loop over work,
// not over a timer's ticks.
func Drain(work <-chan *alert) {
	for a := range work {
		shoutrrr.Send(a.url, a.text)
		time.Sleep(100 * time.Millisecond)
	}
}

// Later waits once and sends once: no loop.
func Later(url, text string) {
	<-time.After(time.Second)
	shoutrrr.Send(url, text)
}
