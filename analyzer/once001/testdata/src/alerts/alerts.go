// Package alerts sends an alert through whichever providers are configured, behind one
// interface with implementations here, in another package and in a test.
package alerts

import (
	"context"
	"net/http"

	"alerts/providers"

	once "github.com/oncekit/once/runtime"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

// Sender sends an alert.
type Sender interface {
	Send(ctx context.Context, to, text string) error
}

type sms struct{ twilio *openapi.ApiService }

func (s sms) Send(ctx context.Context, to, text string) error {
	params := &openapi.CreateMessageParams{}
	params.SetTo(to)
	params.SetBody(text)
	_, err := s.twilio.CreateMessage(params)
	return err
}

var _ Sender = providers.Email{}

type Server struct {
	senders []Sender
	db      once.DB
}

// Alert tells every sender: one finding, at the interface call, covers both
// implementations (the test double in alerts_test.go is not one of them).
func (s *Server) Alert(w http.ResponseWriter, r *http.Request) {
	for _, snd := range s.senders {
		snd.Send(r.Context(), "ops", "disk full") // want `call of \(alerts.Sender\).Send sends the message with no //once: promise, on a path that runs it again.*or on the call: its implementations perform 2 effects`
	}
}

// AlertOnce holds the promise at the interface call: it covers every implementation.
func (s *Server) AlertOnce(w http.ResponseWriter, r *http.Request) {
	incident := r.URL.Query().Get("incident")
	for _, snd := range s.senders {
		once.Forever[struct{}]{Name: "alerts.incident"}.Do(r.Context(), s.db, incident, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, snd.Send(ctx, "ops", incident)
		})
	}
}
