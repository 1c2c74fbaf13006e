// Package logkit is a dependency whose internals reach outbound POSTs: a logger with a
// webhook sink, a client constructor that registers itself, a session store that logs a
// miss, and an OAuth token exchange. None of them is an effect of the application.
package logkit

import (
	"net/http"
	"net/url"
	"strings"
)

var hook = "https://hooks.example.com/errors"

// Error logs a message, and posts it to the webhook sink.
func Error(msg string) {
	_, _ = http.Post(hook, "text/plain", strings.NewReader(msg))
}

// Client talks to the logging service.
type Client struct{ url string }

// NewClient registers the client with the service.
func NewClient(u string) *Client {
	_, _ = http.Post(u+"/register", "text/plain", nil)
	return &Client{url: u}
}

// Session is a session store.
type Session struct{ values map[string]string }

// Get reads a value, logging a miss.
func (s *Session) Get(key string) string {
	v, ok := s.values[key]
	if !ok {
		Error("session miss: " + key)
	}
	return v
}

// Exchange trades an authorization code for a token.
func Exchange(tokenURL, code string) error {
	_, err := http.PostForm(tokenURL, url.Values{"code": {code}})
	return err
}

// Route registers a handler, announcing it to the service.
func Route(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	mux.HandleFunc(pattern, h)
	Error("route " + pattern)
}
