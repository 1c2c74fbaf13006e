// Package relay fires an event at every hook registered with it. It imports none of them:
// the hooks register themselves.
package relay

import (
	"context"
	"net/http"
)

// Hook receives an event.
type Hook interface {
	Fire(ctx context.Context, event string) error
}

var hooks []Hook

// Register adds a hook.
func Register(h Hook) { hooks = append(hooks, h) }

// Retry fires the event at every hook, again at a hook that failed.
func Retry(ctx context.Context, event string) {
	for _, h := range hooks {
		for attempt := 0; attempt < 3; attempt++ {
			if err := h.Fire(ctx, event); err == nil {
				break
			}
		}
	}
}

// Serve fires the posted event once at every hook. A client may post it again, but what
// a hook's receiver does with a POST is not known: the coverage lists the hook's sends.
func Serve(w http.ResponseWriter, r *http.Request) {
	for _, h := range hooks {
		_ = h.Fire(r.Context(), r.FormValue("event"))
	}
}
