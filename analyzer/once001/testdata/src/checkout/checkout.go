// Package checkout creates Stripe customers under promises keyed by related and by
// unrelated values.
package checkout

import (
	"context"
	"net/http"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/customer"
)

type User struct {
	ID    string
	Email string
}

type Item struct{ ID string }

// createCustomer's natural key is the user.
func createCustomer(u User) error {
	_, err := customer.New(&stripe.CustomerParams{Email: stripe.String(u.Email)}) // want `call of customer.New creates the customer with no //once: promise and no idempotency key, on a path that runs it again`
	return err
}

// AddItem's promise is keyed by the cart item: it does not cover a customer created from
// the user, once per item.
//
//once:forever key=item.ID
func AddItem(ctx context.Context, item Item, u User) error {
	return createCustomer(u)
}

// Register's promise is keyed by the user the customer is made from: it covers it.
//
//once:forever key=u.ID
func Register(ctx context.Context, u User) error {
	return createCustomer(u)
}

// keyed passes Stripe's own idempotency key, derived from the user: no promise needed.
func keyed(u User) error {
	p := &stripe.CustomerParams{Email: stripe.String(u.Email)}
	p.SetIdempotencyKey("customer-" + u.ID)
	_, err := customer.New(p)
	return err
}

func Handle(w http.ResponseWriter, r *http.Request) {
	u := User{ID: r.FormValue("user"), Email: r.FormValue("email")}
	AddItem(r.Context(), Item{ID: r.FormValue("item")}, u)
	Register(r.Context(), u)
	keyed(u)
}
