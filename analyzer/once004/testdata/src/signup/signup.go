// Package signup creates accounts.
package signup

import (
	"context"
	"net/http"

	"welcome"

	"github.com/jackc/pgx/v5/pgxpool"
)

type Handler struct {
	pool   *pgxpool.Pool
	sender *welcome.Sender
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u := welcome.User{Email: r.FormValue("email")}
	if _, err := h.sender.SendWelcomeOnce(r.Context(), h.pool, u); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// Import brings users over from the old system.
func Import(ctx context.Context, pool *pgxpool.Pool, s *welcome.Sender, users []welcome.User) error {
	for _, u := range users {
		err := s.SendWelcome(ctx, u) // want `call to SendWelcome bypasses its //once:forever promise: a retry runs it again; call the generated SendWelcomeOnce instead`
		if err != nil {
			return err
		}
	}
	return nil
}
