// Package mailer holds the standard library's SMTP client behind an interface of its own,
// as mail libraries do so that a test can swap it: the call through the interface is the
// client's when the value is made from one.
package mailer

import (
	"io"
	"net/http"
	"net/smtp"
)

type smtpClient interface {
	Data() (io.WriteCloser, error)
	Close() error
}

// Override replaces the client, in tests.
var Override smtpClient

// Welcome mails the address the form names.
func Welcome(w http.ResponseWriter, r *http.Request) {
	var c smtpClient
	if Override != nil {
		c = Override
	} else {
		sc, err := smtp.Dial("localhost:25")
		if err != nil {
			return
		}
		c = sc
	}
	wc, err := c.Data() // want `sends the email with no //once: promise`
	if err != nil {
		return
	}
	io.WriteString(wc, "welcome, "+r.FormValue("to"))
	wc.Close()
}

// recorder keeps what would be sent.
type recorder struct{ w io.WriteCloser }

func (r recorder) Data() (io.WriteCloser, error) { return r.w, nil }
func (r recorder) Close() error                  { return nil }

// Reminder shares its client with a deferred close, so the variable lives in a cell.
func Reminder(w http.ResponseWriter, r *http.Request) {
	c := Override
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	if c == nil {
		sc, err := smtp.Dial("localhost:25")
		if err != nil {
			return
		}
		c = sc
	}
	wc, err := c.Data() // want `sends the email with no //once: promise`
	if err != nil {
		return
	}
	io.WriteString(wc, "a reminder for "+r.FormValue("to"))
}

// Preview writes the mail into the response through a client of its own: nothing is sent.
func Preview(w http.ResponseWriter, r *http.Request) {
	var c smtpClient = recorder{}
	wc, _ := c.Data()
	io.WriteString(wc, "welcome")
}
