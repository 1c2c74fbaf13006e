package jobs

import (
	"context"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/mrz1836/postmark"
)

// Receipts mails a receipt for each order message a watermill router delivers.
type Receipts struct{ pm *postmark.Client }

func (r *Receipts) handle(msg *message.Message) error {
	_, err := r.pm.SendEmail(context.Background(), postmark.Email{To: string(msg.Payload), Subject: "receipt"}) // want `call of \(\*postmark.Client\).SendEmail sends the email with no //once: promise, on a path that runs it again`
	return err
}

func (r *Receipts) forward(msg *message.Message) ([]*message.Message, error) {
	_, err := r.pm.SendEmail(context.Background(), postmark.Email{To: "ops", Subject: string(msg.UUID)}) // want `sends the email with no //once: promise, on a path that runs it again`
	return nil, err
}

func (r *Receipts) audit(msg *message.Message) error {
	_, err := r.pm.SendEmail(context.Background(), postmark.Email{To: "audit", Subject: string(msg.UUID)}) // want `sends the email with no //once: promise, on a path that runs it again`
	return err
}

// Preview has a handler's shape but no router runs it: a call from a command.
func (r *Receipts) Preview(msg *message.Message) error {
	_, err := r.pm.SendEmail(context.Background(), postmark.Email{To: "me", Subject: "preview"})
	return err
}

// Route registers the handlers.
func Route(router *message.Router, r *Receipts) {
	router.AddNoPublisherHandler("receipts", "orders", nil, r.handle)
	router.AddConsumerHandler("audit", "orders", nil, r.audit)
	router.AddHandler("forward", "orders", nil, "ops", nil, r.forward)
}
