// Package digest sends the weekly digest.
package digest

import "shop/notifier"

type Weekly struct {
	svc *notifier.Service
}
