package logins

import "context"

// SignUp creates the account, then its first session unless one exists: the session is
// keyed by the account's id, which the database has just numbered for this call, so no
// other call can make a session for it.
func (s *Store) SignUp(ctx context.Context, email string) error {
	var id int64
	if err := s.db.QueryRow(ctx, `INSERT INTO accounts (email) VALUES ($1) RETURNING id`, email).Scan(&id); err != nil {
		return err
	}
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM account_sessions WHERE account_id = $1`, id).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := s.db.Exec(ctx, `INSERT INTO account_sessions (account_id, email) VALUES ($1, $2)`, id, email)
	return err
}

// SignUpByEmail looks the session up by email, a column the new id does not reach:
// two sign-ups of one address both find none and both insert.
func (s *Store) SignUpByEmail(ctx context.Context, email string) error {
	var id int64
	if err := s.db.QueryRow(ctx, `INSERT INTO accounts (email) VALUES ($1) RETURNING id`, email).Scan(&id); err != nil {
		return err
	}
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM account_sessions WHERE email = $1`, email).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := s.db.Exec(ctx, `INSERT INTO account_sessions (account_id, email) VALUES ($1, $2)`, id, email) // want `insert into account_sessions is decided by a read of account_sessions`
	return err
}
