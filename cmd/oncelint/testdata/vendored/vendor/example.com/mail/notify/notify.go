// Package notify is a second vendored package, reaching the first one's effect.
package notify

import "example.com/mail"

// Shop tells the shop of a new order.
func Shop() error { return mail.Notify() }
