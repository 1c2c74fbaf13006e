// Package smtpclient is the module's SMTP client, which its mailers call through an
// interface. Mail sends what it is given: the mailers decide whether and what, so it is
// judged at their calls, not here. Digest writes its own message and is reported here.
package smtpclient

import (
	"fmt"
	"net/http"
	"strings"

	"gopkg.in/gomail.v2"
)

type Client struct {
	From, Host, User, Pass string
	Port                   int
	LocalName              string
	Hook                   string
}

// Mail builds the message from what it is given and sends it, once.
func (c *Client) Mail(to, subject, body string, headers map[string][]string) error {
	m := gomail.NewMessage()
	m.SetHeader("From", c.From)
	m.SetHeader("To", to)
	m.SetHeader("Subject", subject)
	for k, v := range headers {
		if v != nil {
			m.SetHeader(k, v...)
		}
	}
	m.SetBody("text/html", body)
	d := gomail.NewDialer(c.Host, c.Port, c.User, c.Pass)
	if c.LocalName != "" {
		d.LocalName = c.LocalName
	}
	if err := d.DialAndSend(m); err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	return nil
}

// Digest writes the digest itself: what is sent is its own decision.
func (c *Client) Digest(to string, items []string) error {
	m := gomail.NewMessage()
	m.SetHeader("To", to)
	m.SetBody("text/plain", render(items))
	return gomail.NewDialer(c.Host, c.Port, c.User, c.Pass).DialAndSend(m) // want `call to \(\*gomail.Dialer\).DialAndSend has no //once: promise and the provider takes no idempotency key: a retry sends the email again; declare a promise on Client.Digest`
}

func render(items []string) string { return strings.Join(items, "\n") }

// Notify posts what it is given to the hook the client is configured with.
func (c *Client) Notify(event string) error {
	req, err := http.NewRequest(http.MethodPost, c.Hook, strings.NewReader(event))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Register posts to an endpoint of its own: it knows what the request creates.
func (c *Client) Register(name string) error {
	req, err := http.NewRequest(http.MethodPost, c.Hook+"/accounts", strings.NewReader(name))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req) // want `call to \(\*http.Client\).Do has no idempotency key and no //once: promise: a retry sends the request again; set an Idempotency-Key header on the request, derived from a stable id, or declare a promise on Client.Register`
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
