// Package sms sends texts from HTTP handlers through Twilio's SDK.
package sms

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"

	"firebase.google.com/go/v4/messaging"

	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

type Server struct{ twilio *openapi.ApiService }

type signup struct{ Phone string }

// Welcome texts a welcome: a client that retries the POST texts twice.
func (s *Server) Welcome(w http.ResponseWriter, r *http.Request) {
	var in signup
	json.NewDecoder(r.Body).Decode(&in)
	params := &openapi.CreateMessageParams{}
	params.SetTo(in.Phone)
	params.SetBody("Welcome aboard")
	s.twilio.CreateMessage(params) // want `call of \(\*openapi.ApiService\).CreateMessage sends the message with no //once: promise, on a path that runs it again: a repeat sends the message again; declare a promise on \(\*sms.Server\).Welcome`
}

// SendCode texts a one-time code made for this request: a second request is a new code,
// not a duplicate.
func (s *Server) SendCode(w http.ResponseWriter, r *http.Request) {
	var in signup
	json.NewDecoder(r.Body).Decode(&in)
	s.text(in.Phone, "Your code: "+rand.Text())
}

func (s *Server) text(to, body string) {
	params := &openapi.CreateMessageParams{}
	params.SetTo(to)
	params.SetBody(body)
	s.twilio.CreateMessage(params)
}

// remind texts a reminder, but nothing runs it again: a single call sends once.
func (s *Server) remind(to string) {
	params := &openapi.CreateMessageParams{}
	params.SetTo(to)
	s.twilio.CreateMessage(params)
}

// Remind is called by the application once.
func Remind(s *Server, to string) { s.remind(to) }

type visitor struct{ ip string }

// Notify is a handler that also takes the app's own value and returns an error, as a
// router of the app's own calls it: a client that retries the POST texts twice.
func (s *Server) Notify(w http.ResponseWriter, r *http.Request, v *visitor) error {
	var in signup
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return err
	}
	params := &openapi.CreateMessageParams{}
	params.SetTo(in.Phone)
	params.SetBody("A notice for " + v.ip)
	s.twilio.CreateMessage(params) // want `call of \(\*openapi.ApiService\).CreateMessage sends the message with no //once: promise, on a path that runs it again: a repeat sends the message again; declare a promise on \(\*sms.Server\).Notify`
	return nil
}

// notice takes the writer but not the request: not a handler's shape, nothing runs it again.
func (s *Server) notice(w http.ResponseWriter, to string) {
	params := &openapi.CreateMessageParams{}
	params.SetTo(to)
	s.twilio.CreateMessage(params)
}

// Notice is called by the application once.
func Notice(s *Server, w http.ResponseWriter, to string) { s.notice(w, to) }

// Pusher holds Firebase's client, whose Send is promoted from a type it embeds.
type Pusher struct{ fcm *messaging.Client }

// Ping pushes from a handler: a client that retries the POST pushes twice.
func (p *Pusher) Ping(w http.ResponseWriter, r *http.Request) {
	p.fcm.Send(context.Background(), &messaging.Message{Token: r.FormValue("token")}) // want `call of \(messaging.Client\).Send sends the push notification with no //once: promise, on a path that runs it again: a repeat sends the push notification again; declare a promise on \(\*sms.Pusher\).Ping`
}

// Notifier embeds Firebase's client: its Send is promoted through two embedded types.
type Notifier struct{ *messaging.Client }

// Pong pushes through the app's own embedding type: a retried POST pushes twice.
func (n Notifier) Pong(w http.ResponseWriter, r *http.Request) {
	n.Send(r.Context(), &messaging.Message{Token: r.FormValue("token")}) // want `call of \(messaging.Client\).Send sends the push notification with no //once: promise, on a path that runs it again: a repeat sends the push notification again; declare a promise on \(sms.Notifier\).Pong`
}
