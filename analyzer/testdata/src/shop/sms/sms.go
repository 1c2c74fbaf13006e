// Package sms sends text messages through whichever provider is configured: two adapters
// of one interface. The decision to send is made where the interface is called, so that
// is where a missing promise is reported, not in each adapter.
package sms

import (
	"net/http"
	"net/url"
	"strings"
)

// Provider sends one text message.
type Provider interface {
	SendMessage(phone, body string) error
}

type Twilio struct{ base string }

func (t *Twilio) SendMessage(phone, body string) error { return t.send(phone, body) }

func (t *Twilio) send(phone, body string) error {
	_, err := http.PostForm(t.base+"/Messages.json", url.Values{"To": {phone}, "Body": {body}})
	return err
}

type Vonage struct{ base string }

func (v *Vonage) SendMessage(phone, body string) error {
	req, err := http.NewRequest(http.MethodPost, v.base+"/sms/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	_, err = http.DefaultClient.Do(req)
	return err
}

// VerifyCode checks a one-time code with the provider: a check, not an effect.
func (t *Twilio) VerifyCode(phone, code string) error {
	_, err := http.PostForm(t.base+"/VerificationCheck", url.Values{"To": {phone}, "Code": {code}})
	return err
}
