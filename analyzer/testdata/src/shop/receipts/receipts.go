// Package receipts emails receipts and reminders through interfaces, as an application
// that swaps its mail provider in tests and between regions writes them.
package receipts

import (
	"context"
	"net/smtp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

type Order struct {
	ID    string
	Email string
}

// Sender sends one email.
type Sender interface {
	Send(ctx context.Context, to, subject, body string) error
}

type sesSender struct {
	ses  *sesv2.Client
	from string
}

// NewSES returns the SES implementation of Sender.
func NewSES(ses *sesv2.Client, from string) Sender { return &sesSender{ses: ses, from: from} }

// Send is reached only through Sender, and every call of Sender.Send here is made under a
// promise (SendReceipt's): not reported.
func (s *sesSender) Send(ctx context.Context, to, subject, body string) error {
	_, err := s.ses.SendEmail(ctx, &sesv2.SendEmailInput{FromEmailAddress: aws.String(s.from)})
	return err
}

// SendReceipt emails the receipt once per order.
//
//once:forever key=o.ID
func SendReceipt(ctx context.Context, s Sender, o Order) error {
	return s.Send(ctx, o.Email, "Your receipt", "Order "+o.ID)
}

// Deliverer hands a message to a relay.
type Deliverer interface {
	Deliver(ctx context.Context, to, body string) error
}

// Relay delivers through an SMTP relay. Its method is reached through Deliverer, and no
// call of Deliverer.Deliver holds a promise. It sends what it is given, unconditionally:
// the email is its caller's decision, reported there, once.
type Relay struct{ Addr string }

func (r Relay) Deliver(ctx context.Context, to, body string) error {
	return smtp.SendMail(r.Addr, nil, "shop@example.com", []string{to}, []byte(body))
}

// remindUnpaid runs from a ticker with no promise: every tick that finds the order still
// unpaid emails again, through whichever Deliverer it was given.
func remindUnpaid(ctx context.Context, d Deliverer, o Order) error {
	return d.Deliver(ctx, o.Email, "Order "+o.ID+" is unpaid") // want `call to \(receipts.Deliverer\).Deliver reaches smtp.SendMail with no //once: promise: a retry sends the email again; declare a promise on remindUnpaid`
}

// Start runs the reminders.
func Start(ctx context.Context, d Deliverer, unpaid func() []Order) {
	for _, o := range unpaid() {
		_ = remindUnpaid(ctx, d, o)
	}
}
