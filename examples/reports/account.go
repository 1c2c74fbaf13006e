package reports

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Account is an authenticated customer.
type Account struct {
	// ID names the account; operation references are scoped to it.
	ID string
	// Email is where the account's reports are announced.
	Email string
}

// errUnauthenticated: no bearer token, or one no account holds.
var errUnauthenticated = errors.New("unknown or missing bearer token")

// AddAccount creates an account that authenticates with token, unless an account with that
// id exists already.
func (app *App) AddAccount(ctx context.Context, id, email, token string) error {
	_, err := app.db.Exec(ctx, `INSERT INTO accounts (id, email, token) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, id, email, token)
	if err != nil {
		return fmt.Errorf("adding account %s: %w", id, err)
	}
	return nil
}

// account authenticates r by its bearer token.
func (app *App) account(r *http.Request) (Account, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return Account{}, errUnauthenticated
	}
	acct, _, err := app.lookupAccountOnce(r.Context(), token)
	return acct, err
}

// lookupAccount finds the account a bearer token belongs to. The front door (to scope the
// request's key) and the handler both ask for it; the request promise makes that one query
// per request. It spends nothing, so a promise as short as the request is the right one.
//
//once:request key=token
func (app *App) lookupAccount(ctx context.Context, token string) (Account, error) {
	var a Account
	err := app.db.QueryRow(ctx, `SELECT id, email FROM accounts WHERE token = $1`, token).Scan(&a.ID, &a.Email)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, errUnauthenticated
	}
	if err != nil {
		return Account{}, fmt.Errorf("looking up the account: %w", err)
	}
	return a, nil
}
