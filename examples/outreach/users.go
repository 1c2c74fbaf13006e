package outreach

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// User is a brand's account.
type User struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
	Plan  string `json:"plan"`
}

// ErrUnauthorized: the request's token names no user.
var ErrUnauthorized = errors.New("outreach: unknown or missing token")

// CurrentUser loads the user a request's token belongs to, with the plan of their
// subscription. The middleware, the handler and the response's account summary all ask
// for it; the promise is once per request, so they share one query. Two requests load it
// twice, which is right: it is a read, and nothing here may depend on it happening once.
//
//once:request key=token
func (a *App) CurrentUser(ctx context.Context, token string) (User, error) {
	a.Stats.UserLookups.Add(1)
	var u User
	err := a.db.QueryRow(ctx, `
		SELECT u.id, u.email, u.name, coalesce(s.plan, 'free')
		FROM users u LEFT JOIN subscriptions s ON s.user_id = u.id
		WHERE u.api_token = $1`, token).Scan(&u.ID, &u.Email, &u.Name, &u.Plan)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, ErrUnauthorized
	}
	if err != nil {
		return User{}, fmt.Errorf("loading the signed-in user: %w", err)
	}
	return u, nil
}

// Allowance is how many conversations a plan may open per calendar month.
func Allowance(plan string) int {
	switch plan {
	case "pro":
		return 50
	case "team":
		return 200
	default:
		return 5
	}
}
