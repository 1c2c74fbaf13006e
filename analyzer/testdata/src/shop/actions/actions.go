// Package actions runs the editor's paid actions: a click names its action by a key, and
// the account pays for the action once.
package actions

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"shop/store"
)

// querier is what the look-ups need: the pool, or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type Service struct {
	db    *pgxpool.Pool
	store *store.Store
	limit int64
}

// findByKey returns the action claimed under key, and whether there is one.
func findByKey(ctx context.Context, q querier, account, key string) (store.Action, bool, error) {
	a := store.Action{Account: account, Key: key}
	err := q.QueryRow(ctx, `SELECT id, status FROM paid_actions WHERE account_id = $1 AND action_key = $2`, account, key).
		Scan(&a.ID, &a.Status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Action{}, false, nil
	case err != nil:
		return store.Action{}, false, fmt.Errorf("actions: looking up %s: %w", key, err)
	}
	return a, true, nil
}

// create inserts a queued action under key.
func create(ctx context.Context, q querier, account, key string) (store.Action, error) {
	a := store.Action{Account: account, Key: key, Status: "queued"}
	err := q.QueryRow(ctx, `INSERT INTO paid_actions (account_id, action_key, status) VALUES ($1, $2, 'queued') RETURNING id`, account, key).
		Scan(&a.ID)
	if err != nil {
		return store.Action{}, fmt.Errorf("actions: creating %s: %w", key, err)
	}
	return a, nil
}

// Request answers a click with the action claimed under its key, or a new one. Two
// clicks that both look before either creates both create, and the account pays twice.
func (s *Service) Request(ctx context.Context, account, key string) (store.Action, error) {
	a, found, err := findByKey(ctx, s.db, account, key)
	if err != nil {
		return store.Action{}, err
	}
	if found {
		return a, nil
	}
	return create(ctx, s.db, account, key) // want `insert into paid_actions by actions.create is decided by a read of paid_actions by actions.findByKey with no lock, no conflict clause and no unique constraint on \(account_id, action_key\)`
}

// RequestThroughStore is the same race through the store package's helpers.
func (s *Service) RequestThroughStore(ctx context.Context, account, key string) (store.Action, error) {
	a, err := s.store.FindAction(ctx, account, key)
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return store.Action{}, err
	}
	return s.store.CreateAction(ctx, account, key) // want `insert into paid_actions by \(\*store.Store\).CreateAction is decided by a read of paid_actions by \(\*store.Store\).FindAction`
}

// RequestClaimed looks first only to answer a retry without a write; the claim is the
// insert's, under the unique key.
func (s *Service) RequestClaimed(ctx context.Context, account, key string) (store.Action, error) {
	a, err := s.store.FindAction(ctx, account, key)
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return store.Action{}, err
	}
	a, claimed, err := s.store.ClaimAction(ctx, account, key)
	if err != nil || claimed {
		return a, err
	}
	return s.store.FindAction(ctx, account, key)
}

// RequestLocked decides under the account's row lock, held until tx ends: a second click
// waits for the first to commit, then finds its action.
func (s *Service) RequestLocked(ctx context.Context, tx pgx.Tx, account, key string) (store.Action, error) {
	if err := store.LockAccount(ctx, tx, account); err != nil {
		return store.Action{}, err
	}
	a, found, err := findByKey(ctx, tx, account, key)
	if err != nil || found {
		return a, err
	}
	return create(ctx, tx, account, key)
}

// Retry queues the action again under a new key; the old action is read only for the
// account it belongs to, which decides nothing.
func (s *Service) Retry(ctx context.Context, id, newKey string) (store.Action, error) {
	var account string
	if err := s.db.QueryRow(ctx, `SELECT account_id FROM paid_actions WHERE id = $1`, id).Scan(&account); err != nil {
		return store.Action{}, fmt.Errorf("actions: reading %s: %w", id, err)
	}
	return create(ctx, s.db, account, newKey)
}

// Show records that the account opened the action: the look-up decides an insert into
// another table.
func (s *Service) Show(ctx context.Context, account, key string) (store.Action, error) {
	a, found, err := findByKey(ctx, s.db, account, key)
	if err != nil || !found {
		return a, err
	}
	_, err = s.db.Exec(ctx, `INSERT INTO action_views (action_id, account_id) VALUES ($1, $2)`, a.ID, account)
	return a, err
}

// ErrNotDone refuses a follow-up to an action that has not succeeded.
var ErrNotDone = errors.New("actions: the action has not succeeded")

// FollowUp queues an action under a parent action that succeeded: the read finds the
// parent by its id and decides from its status, but it does not look for the row being
// inserted, so two follow-ups are two actions, not a race for one.
func (s *Service) FollowUp(ctx context.Context, parentID, key string) (store.Action, error) {
	var account, status string
	if err := s.db.QueryRow(ctx, `SELECT account_id, status FROM paid_actions WHERE id = $1`, parentID).Scan(&account, &status); err != nil {
		return store.Action{}, fmt.Errorf("actions: reading %s: %w", parentID, err)
	}
	if status != "succeeded" {
		return store.Action{}, ErrNotDone
	}
	a := store.Action{Account: account, Key: key, Status: "queued"}
	err := s.db.QueryRow(ctx, `INSERT INTO paid_actions (account_id, action_key, status, parent_id) VALUES ($1, $2, 'queued', $3) RETURNING id`,
		account, key, parentID).Scan(&a.ID)
	return a, err
}

// RequestOrReadBack looks the key up, creates the action when it is absent, and reads
// the winner's row back when a concurrent click created it first: the unique index on
// (account_id, action_key) turns the race into a unique violation one click handles, not
// into a second action. Not reported.
func (s *Service) RequestOrReadBack(ctx context.Context, account, key string) (store.Action, error) {
	a, found, err := findByKey(ctx, s.db, account, key)
	if err != nil || found {
		return a, err
	}
	a, err = create(ctx, s.db, account, key)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		a, _, err = findByKey(ctx, s.db, account, key)
	}
	return a, err
}

// ErrDuplicate answers a click whose key another click claimed a moment before.
var ErrDuplicate = errors.New("actions: the key is taken")

// RequestOnce does the same, through a helper that names the violation.
func (s *Service) RequestOnce(ctx context.Context, account, key string) (store.Action, error) {
	a, found, err := findByKey(ctx, s.db, account, key)
	if err != nil || found {
		return a, err
	}
	a, err = create(ctx, s.db, account, key)
	if isDuplicate(err) {
		return store.Action{}, ErrDuplicate
	}
	return a, err
}

// isDuplicate reports PostgreSQL's unique_violation.
func isDuplicate(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
