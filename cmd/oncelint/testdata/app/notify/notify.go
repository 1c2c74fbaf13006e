// Package notify writes the messages customers receive.
package notify

import "example.com/app/mailer"

// Shipped tells a customer their order left the warehouse.
func Shipped(m *mailer.Mailer, email, order string) error {
	return m.Send(email, "Your order "+order+" has shipped")
}
