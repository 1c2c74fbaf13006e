// Package gomail is a stub of gopkg.in/gomail.v2 for the analyzer's tests.
package gomail

type Message struct{ header map[string][]string }

func NewMessage() *Message { return &Message{header: map[string][]string{}} }

func (m *Message) SetHeader(field string, value ...string) { m.header[field] = value }

func (m *Message) SetBody(contentType, body string) {}

type Dialer struct {
	Host      string
	LocalName string
}

func NewDialer(host string, port int, username, password string) *Dialer {
	return &Dialer{Host: host}
}

func (d *Dialer) DialAndSend(m ...*Message) error { return nil }
