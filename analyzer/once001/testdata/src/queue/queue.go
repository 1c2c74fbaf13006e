// Package queue sends mail from in-process queues: a worker started with go receives from
// a channel a struct holds, and sends once for each value put on it.
package queue

import (
	"net/http"
	"net/smtp"
)

type message struct{ to, body string }

// Mailer sends what Enqueue hands its worker.
type Mailer struct{ ch chan message }

// NewMailer starts the worker. Starting it sends nothing: a handler that makes a mailer is
// no finding.
func NewMailer() *Mailer {
	m := &Mailer{ch: make(chan message, 16)}
	go func() {
		for msg := range m.ch {
			smtp.SendMail("localhost:25", nil, "shop@example.com", []string{msg.to}, []byte(msg.body))
		}
	}()
	return m
}

// Enqueue hands a message to the worker: the send happens here, once per call.
func (m *Mailer) Enqueue(to, body string) {
	m.ch <- message{to, body} // want `call of the worker of queue.Mailer.ch sends the email with no //once: promise, on a path that runs it again`
}

var mailer = NewMailer()

// Welcome mails the address the form names; a double submit mails it twice.
func Welcome(w http.ResponseWriter, r *http.Request) {
	mailer.Enqueue(r.FormValue("to"), "welcome")
}

// Restart makes a new mailer, and sends nothing.
func Restart(w http.ResponseWriter, r *http.Request) {
	mailer = NewMailer()
}

// Notifier's worker is a method started with go, and selects on its queue.
type Notifier struct {
	jobs chan string
	stop chan struct{}
}

// Start starts the worker.
func (n *Notifier) Start() { go n.run() }

func (n *Notifier) run() {
	for {
		select {
		case to := <-n.jobs:
			smtp.SendMail("localhost:25", nil, "shop@example.com", []string{to}, []byte("shipped"))
		case <-n.stop:
			return
		}
	}
}

var notifier = &Notifier{jobs: make(chan string), stop: make(chan struct{})}

// Shipped tells the buyer; a retried request tells them again.
func Shipped(w http.ResponseWriter, r *http.Request) {
	notifier.jobs <- r.FormValue("to") // want `call of the worker of queue.Notifier.jobs sends the email with no //once: promise`
}

// Boot starts the notifier from a handler, and sends nothing.
func Boot(w http.ResponseWriter, r *http.Request) { notifier.Start() }
