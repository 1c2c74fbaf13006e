// Package accounts is a gRPC-style service: its exported methods are called by the
// server through a generated interface, never by the module's own code.
package accounts

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"shop/mailsvc"

	stripe "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/customer"
)

type Server struct{}

type CreateRequest struct{ Email string }

// CreateAccount is an entry point: judged at its definition, where the customer is made
// by a helper.
func (s *Server) CreateAccount(ctx context.Context, req *CreateRequest) error {
	return s.ensureCustomer(req.Email)
}

func (s *Server) ensureCustomer(email string) error {
	_, err := customer.New(&stripe.CustomerParams{Email: stripe.String(email)}) // want `call to customer.New has no idempotency key and no //once: promise: a retry creates the customer again; set IdempotencyKey \(or call SetIdempotencyKey\) from a stable id, or declare a promise on Server.ensureCustomer`
	return err
}

// Signup makes the customer with a key from the request's own id: not reported.
func (s *Server) Signup(ctx context.Context, req *CreateRequest) error {
	p := &stripe.CustomerParams{Email: stripe.String(req.Email)}
	p.SetIdempotencyKey("signup-" + req.Email)
	_, err := customer.New(p)
	return err
}

// Welcome emails a new account through the module's mail service.
func (s *Server) Welcome(ctx context.Context, ses *sesv2.Client, req *CreateRequest) error {
	return mailsvc.Send(ctx, ses, req.Email, "welcome") // want `call to mailsvc.Send reaches \(\*sesv2.Client\).SendEmail with no //once: promise`
}
