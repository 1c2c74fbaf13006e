// Package rawsms sends texts with a raw POST to an endpoint its provider is built with.
package rawsms

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

const base = "https://rest.nexmo.com"

type Provider struct {
	APIPath string
	Client  *http.Client
}

func NewProvider() *Provider { return &Provider{APIPath: base + "/sms/json", Client: http.DefaultClient} }

func (p *Provider) Send(to, text string) error {
	body := url.Values{"to": {to}, "text": {text}}
	r, err := http.NewRequest("POST", p.APIPath, strings.NewReader(body.Encode()))
	if err != nil {
		return err
	}
	_, err = p.Client.Do(r) // want `call of \(\*http.Client\).Do to https://rest.nexmo.com/sms/json sends the text message`
	return err
}

var provider = NewProvider()

func Notify(w http.ResponseWriter, r *http.Request) {
	provider.Send(r.FormValue("to"), "Your order shipped")
}

// Check asks the verify service whether a code is right: a read.
func Check(w http.ResponseWriter, r *http.Request) {
	u := fmt.Sprintf("%s/v2/Services/%s/VerificationCheck", "https://verify.twilio.com", r.FormValue("service"))
	http.Post(u, "application/x-www-form-urlencoded", strings.NewReader(""))
}

// Start sends a verification: a text.
func Start(w http.ResponseWriter, r *http.Request) {
	u := fmt.Sprintf("%s/v2/Services/%s/Verifications", "https://verify.twilio.com", r.FormValue("service"))
	http.Post(u, "application/x-www-form-urlencoded", strings.NewReader("")) // want `call of http.Post to https://verify.twilio.com/v2/Services/…/Verifications sends the verification message`
}
