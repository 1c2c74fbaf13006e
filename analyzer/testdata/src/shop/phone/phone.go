// Package phone confirms phone numbers by text message.
package phone

import (
	"net/http"
	"net/url"

	stripe "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/customer"

	"shop/sms"
)

type API struct {
	sms sms.Provider
	mux *http.ServeMux
}

// routes registers the handlers in closures: registering is not calling, so routes
// reaches no effect; each handler is an entry point judged where it is defined.
func (a *API) routes() {
	a.mux.HandleFunc("/confirm", func(w http.ResponseWriter, r *http.Request) {
		a.sendConfirmation(r.FormValue("phone"))
	})
	a.mux.HandleFunc("/signup", func(w http.ResponseWriter, r *http.Request) {
		_ = a.signup(r.FormValue("email"))
	})
}

// sendConfirmation texts a code through the configured provider, with no promise.
func (a *API) sendConfirmation(phone string) {
	_ = a.sms.SendMessage(phone, "your code") // want `call to \(sms.Provider\).SendMessage reaches http.PostForm \(through \(\*sms.Twilio\).SendMessage, then \(\*sms.Twilio\).send\) with no //once: promise: a retry sends the POST again`
}

func (a *API) signup(email string) error {
	_, err := customer.New(&stripe.CustomerParams{Email: stripe.String(email)}) // want `call to customer.New has no idempotency key and no //once: promise: a retry creates the customer again; set IdempotencyKey \(or call SetIdempotencyKey\) from a stable id, or declare a promise on API.signup`
	return err
}

// exchange trades a code for a token at an endpoint from configuration: the grant
// type marks it as a token request, a read.
func exchange(tokenURL, code string) error {
	_, err := http.PostForm(tokenURL, url.Values{"grant_type": {"authorization_code"}, "code": {code}})
	return err
}
