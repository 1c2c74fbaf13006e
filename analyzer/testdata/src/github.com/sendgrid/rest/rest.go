// Package rest is a stub of sendgrid's rest package.
package rest

type Request struct{ BaseURL string }

type Response struct {
	StatusCode int
	Body       string
}
