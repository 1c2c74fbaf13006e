// Package b texts customers; package a imports it.
package b

import "example.com/layers/sms"

func text(c *sms.Client, to string) error {
	return c.Send(sms.Message{To: to})
}

// Run texts everyone.
func Run(c *sms.Client, to []string) {
	for _, p := range to {
		_ = text(c, p)
	}
}
