// Package portapp wires the SES client in behind the mail port and sends through the
// port: the port's package exports no effect for its method (it cannot see the client),
// so the effect is found through the client's package, which this one imports.
package portapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"shop/port"
	"shop/port/sesmail"
)

type App struct{ Mail port.Mailer }

// New wires the SES client in.
func New(ses *sesv2.Client) *App { return &App{Mail: &sesmail.Client{SES: ses}} }

// Welcome sends through the port with no promise: reported here, where the email is
// decided.
func (a *App) Welcome(ctx context.Context, to string) error {
	return a.Mail.Send(ctx, to, "Welcome", "Hello") // want `call to \(port.Mailer\).Send reaches \(\*sesv2.Client\).SendEmail`
}

// Receipt sends through the port under a promise: covered.
//
//once:forever key=orderID
func (a *App) Receipt(ctx context.Context, orderID, to string) error {
	return a.Mail.Send(ctx, to, "Receipt", orderID)
}
