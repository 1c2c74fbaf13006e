// Package a texts too.
package a

import (
	"example.com/layers/b"
	"example.com/layers/sms"
)

func remind(c *sms.Client, to string) error {
	return c.Send(sms.Message{To: to})
}

// Run reminds everyone.
func Run(c *sms.Client, to []string) {
	b.Run(c, to)
	for _, p := range to {
		_ = remind(c, p)
	}
}
