// Package port declares the mail port the application sends through; its implementations
// live in packages of their own, which this one cannot see.
package port

import "context"

// Mailer sends one email.
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Notices sends the shop's own notices, each written by the implementation.
type Notices interface {
	Welcome(ctx context.Context, to string) error
	Goodbye(ctx context.Context, to string) error
}
