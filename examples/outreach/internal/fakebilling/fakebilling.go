// Package fakebilling is a billing API on loopback for the outreach tests and command: it
// answers what a customer's subscription is now (the truth a webhook handler re-reads), and
// performs plan changes through a fake provider that counts them and honours
// Idempotency-Key.
package fakebilling

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oncekit/once/internal/fakeprovider"
)

// State is a customer's subscription, as GET /v1/customers/{id} answers it.
type State struct {
	Customer  string    `json:"customer"`
	Plan      string    `json:"plan"`
	Status    string    `json:"status"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Server is a running fake billing API.
type Server struct {
	// URL is the base URL to give the app.
	URL string
	// Changes is the provider that performs plan changes (POST /v1/subscriptions/{id}):
	// count them with Changes.Effects().
	Changes *fakeprovider.Server

	// BeforeAnswer, when set, runs after a customer's state is read for an answer and
	// before the answer is sent: a test holds a read there to put another delivery's read
	// after it. Set it before the first request.
	BeforeAnswer func(customer string)

	srv    *httptest.Server
	mu     sync.Mutex
	states map[string]State
	reads  int
}

// New starts a fake billing API that lives as long as t.
func New(t testing.TB) *Server {
	s := Start()
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake billing API for a program rather than a test; Close stops it.
func Start() *Server {
	s := &Server{Changes: fakeprovider.Start(), states: map[string]State{}}
	target, _ := url.Parse(s.Changes.URL) // an httptest server's URL
	proxy := httputil.NewSingleHostReverseProxy(target)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/customers/") {
			s.serveCustomer(w, strings.TrimPrefix(r.URL.Path, "/v1/customers/"))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL
	return s
}

// Close stops the server and its plan-change provider.
func (s *Server) Close() {
	s.srv.Close()
	s.Changes.Close()
}

func (s *Server) serveCustomer(w http.ResponseWriter, id string) {
	s.mu.Lock()
	st, ok := s.states[id]
	s.reads++
	s.mu.Unlock()
	if s.BeforeAnswer != nil {
		s.BeforeAnswer(id)
	}
	if !ok {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"no such customer"}}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st)
}

// Set makes st the customer's state from now on.
func (s *Server) Set(st State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states[st.Customer] = st
}

// Delete forgets the customer: it answers 404 from now on.
func (s *Server) Delete(customer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.states, customer)
}

// Reads returns how many times a customer's state was read.
func (s *Server) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}
