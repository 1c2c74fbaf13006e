// Package fanout is a vendored notifier whose every channel mails, one of them through a
// channel that sends again on failure.
package fanout

import "net/smtp"

// Channel is one way to notify.
type Channel interface{ Send(msg string) error }

type ops struct{}

func (ops) Send(msg string) error {
	return smtp.SendMail("localhost:25", nil, "shop@example.com", []string{"ops@example.com"}, []byte(msg))
}

type owner struct{}

func (owner) Send(msg string) error {
	return smtp.SendMail("localhost:25", nil, "shop@example.com", []string{"owner@example.com"}, []byte(msg))
}

// retried sends again once on failure.
type retried struct{ next Channel }

func (r retried) Send(msg string) error {
	if err := r.next.Send(msg); err != nil {
		return r.next.Send(msg)
	}
	return nil
}

var channels = []Channel{ops{}, retried{owner{}}}

// All sends msg on every channel.
func All(msg string) {
	for _, c := range channels {
		_ = c.Send(msg)
	}
}
