// Package tickets answers support tickets.
package tickets

import "shop/notifier"

type Desk struct {
	mail *notifier.Service
}
