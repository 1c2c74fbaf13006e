// Package sms sends texts from HTTP handlers through Twilio's SDK.
package sms

import (
	"crypto/rand"
	"encoding/json"
	"net/http"

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
