// Package portapp wires the SES client in behind the mail port and sends through the
// port: the port's package exports no effect for its method (it cannot see the client),
// so the effect is found through the client's package, which this one imports.
package portapp

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"shop/port"
	"shop/port/notices"
	"shop/port/sesmail"
)

type App struct {
	Mail    port.Mailer
	Notices port.Notices
}

// New wires the SES client in.
func New(ses *sesv2.Client) *App {
	return &App{Mail: &sesmail.Client{SES: ses}, Notices: &notices.Templates{SES: ses}}
}

// Join welcomes through the notices port: the notices package writes the text, this
// decides to send it, and is reported.
func (a *App) Join(ctx context.Context, to string) error {
	return a.Notices.Welcome(ctx, to) // want `call to \(port.Notices\).Welcome reaches \(\*sesv2.Client\).SendEmail \(through \(\*notices.Templates\).Welcome, then \(\*notices.Templates\).mail\)`
}

// Leave says goodbye under a promise: covered.
//
//once:forever key=to
func (a *App) Leave(ctx context.Context, to string) error {
	return a.Notices.Goodbye(ctx, to)
}

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
