package jobs

import (
	"context"

	"github.com/mrz1836/postmark"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Consume mails a receipt for each delivery of a queue: a delivery whose
// acknowledgement is lost is delivered again.
func Consume(ch *amqp.Channel, pm *postmark.Client) error {
	msgs, err := ch.Consume("orders", "", false, false, false, false, nil)
	if err != nil {
		return err
	}
	go func() {
		for d := range msgs {
			pm.SendEmail(context.Background(), postmark.Email{To: string(d.Body), Subject: "receipt"}) // want `sends the email with no //once: promise, on a path that runs it again`
			d.Ack(false)
		}
	}()
	return nil
}

// Announce mails once before it starts consuming: nothing delivers that mail again.
func Announce(ch *amqp.Channel, pm *postmark.Client) error {
	pm.SendEmail(context.Background(), postmark.Email{To: "ops", Subject: "consumer up"})
	_, err := ch.Consume("orders", "", false, false, false, false, nil)
	return err
}

// Relay mails what a channel of the program's own hands over: no broker delivers again.
func Relay(work <-chan string, pm *postmark.Client) {
	for to := range work {
		pm.SendEmail(context.Background(), postmark.Email{To: to, Subject: "relay"})
	}
}
