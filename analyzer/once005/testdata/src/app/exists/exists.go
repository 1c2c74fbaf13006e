// Package exists decides inserts from reads written in SQL: the tests that ask whether
// a row is there, and those that only cap, validate or copy.
package exists

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var ErrTaken = errors.New("taken")

type Store struct{ db *pgxpool.Pool }

// Invite inserts the invitation when QueryRow found none: two calls both find none.
func (s *Store) Invite(ctx context.Context, team int64, email string) error {
	var id int64
	err := s.db.QueryRow(ctx, `SELECT id FROM invites WHERE team_id = $1 AND email = $2`, team, email).Scan(&id)
	if err == nil {
		return ErrTaken
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	_, err = s.db.Exec(ctx, `INSERT INTO invites (team_id, email) VALUES ($1, $2)`, team, email) // want `insert into invites is decided by a read of invites with no lock, no conflict clause and no unique constraint on \(team_id, email\): two calls can both find no row and both insert; put a unique index on invites \(team_id, email\) and make the insert the check \(INSERT .. ON CONFLICT DO NOTHING, and read the winner's row when none comes back\), or declare //once:transaction on \(\*exists.Store\).Invite`
	return err
}

// Follow asks with SELECT EXISTS.
func (s *Store) Follow(ctx context.Context, user, target int64) error {
	var found bool
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM follows WHERE user_id = $1 AND target_id = $2)`, user, target).Scan(&found); err != nil {
		return err
	}
	if found {
		return nil
	}
	_, err := s.db.Exec(ctx, `INSERT INTO follows (user_id, target_id) VALUES ($1, $2)`, user, target) // want `insert into follows is decided by a read of follows`
	return err
}

// Star counts against zero.
func (s *Store) Star(ctx context.Context, user, repo int64) error {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM stars WHERE user_id = $1 AND repo_id = $2`, user, repo).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := s.db.Exec(ctx, `INSERT INTO stars (user_id, repo_id) VALUES ($1, $2)`, user, repo) // want `insert into stars is decided by a read of stars`
	return err
}

// Tag asks whether a row comes back, SELECT 1 .. LIMIT 1 and rows.Next().
func (s *Store) Tag(ctx context.Context, item int64, tag string) error {
	rows, err := s.db.Query(ctx, `SELECT 1 FROM item_tags WHERE item_id = $1 AND tag = $2 LIMIT 1`, item, tag)
	if err != nil {
		return err
	}
	found := rows.Next()
	rows.Close()
	if found {
		return nil
	}
	_, err = s.db.Exec(ctx, `INSERT INTO item_tags (item_id, tag) VALUES ($1, $2)`, item, tag) // want `insert into item_tags is decided by a read of item_tags`
	return err
}

// TagEach checks each tag in the loop that inserts it: a found tag is skipped.
func (s *Store) TagEach(ctx context.Context, item int64, tags []string) error {
	for _, tag := range tags {
		var n int
		if err := s.db.QueryRow(ctx, `SELECT count(*) FROM item_tags WHERE item_id = $1 AND tag = $2`, item, tag).Scan(&n); err != nil {
			return err
		}
		switch {
		case tag == "":
		default:
			if n > 0 {
				continue
			}
		}
		if _, err := s.db.Exec(ctx, `INSERT INTO item_tags (item_id, tag) VALUES ($1, $2)`, item, tag); err != nil { // want `insert into item_tags is decided by a read of item_tags`
			return err
		}
	}
	return nil
}

// TagReport counts the known tags in one loop and inserts all in another: the test is
// over before any insert runs, and decides none.
func (s *Store) TagReport(ctx context.Context, item int64, tags []string) (known int, err error) {
	for _, tag := range tags {
		var n int
		if err := s.db.QueryRow(ctx, `SELECT count(*) FROM item_tags WHERE item_id = $1 AND tag = $2`, item, tag).Scan(&n); err != nil {
			return 0, err
		}
		if n > 0 {
			known++
		}
	}
	for _, tag := range tags {
		if _, err := s.db.Exec(ctx, `INSERT INTO item_tags (item_id, tag) VALUES ($1, $2)`, item, tag); err != nil {
			return 0, err
		}
	}
	return known, nil
}

// maxActive is a limit of one row: the same check as "is there one already".
const maxActive = 1

// maxPending caps the unverified sessions of a user: an abuse limit.
const maxPending = 10

// OpenOnly allows one active session: a limit of one row is an existence test.
func (s *Store) OpenOnly(ctx context.Context, user int64) error {
	var active int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1 AND active`, user).Scan(&active); err != nil {
		return err
	}
	if active >= maxActive {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sessions (user_id, active) VALUES ($1, true)`, user) // want `insert into sessions is decided by a read of sessions`
	return err
}

// Open refuses a user with too many pending sessions, then opens another: each attempt
// makes its own session, and two at once overrun the cap by one; they duplicate nothing.
func (s *Store) Open(ctx context.Context, user int64) error {
	var pending int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1 AND NOT active`, user).Scan(&pending); err != nil {
		return err
	}
	if pending >= maxPending {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sessions (user_id, active) VALUES ($1, false)`, user)
	return err
}

// Spend sums the month's spending and refuses one over the quota: a balance against a
// limit, not an existence test.
func (s *Store) Spend(ctx context.Context, account int64, amount, quota int64) error {
	var spent int64
	if err := s.db.QueryRow(ctx, `SELECT coalesce(sum(amount), 0) FROM charges WHERE account_id = $1`, account).Scan(&spent); err != nil {
		return err
	}
	if spent+amount > quota {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO charges (account_id, amount) VALUES ($1, $2)`, account, amount)
	return err
}

// Refresh issues a new token only when the old one is found: the insert follows from
// the row the read found; it does not make one the read found absent.
func (s *Store) Refresh(ctx context.Context, old, fresh string) error {
	var user int64
	err := s.db.QueryRow(ctx, `SELECT user_id FROM tokens WHERE token = $1`, old).Scan(&user)
	if err != nil {
		return err
	}
	if user == 42 {
		return ErrTaken
	}
	_, err = s.db.Exec(ctx, `INSERT INTO tokens (user_id, token) VALUES ($1, $2)`, user, fresh)
	return err
}

// InviteOnce makes the insert the check.
func (s *Store) InviteOnce(ctx context.Context, team int64, email string) error {
	var id int64
	if err := s.db.QueryRow(ctx, `SELECT id FROM invites WHERE team_id = $1 AND email = $2`, team, email).Scan(&id); err == nil {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO invites (team_id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING`, team, email)
	return err
}

// Subscribe's email is UNIQUE in the migrations: the second insert fails.
func (s *Store) Subscribe(ctx context.Context, email string) error {
	var id int64
	if err := s.db.QueryRow(ctx, `SELECT id FROM subscribers WHERE email = $1`, email).Scan(&id); err == nil {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO subscribers (email) VALUES ($1)`, email)
	return err
}

// Rename's name is made UNIQUE by ALTER TABLE .. ADD COLUMN in the migrations.
func (s *Store) Rename(ctx context.Context, user int64, name string) error {
	var id int64
	if err := s.db.QueryRow(ctx, `SELECT id FROM handles WHERE name = $1`, name).Scan(&id); err == nil {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO handles (user_id, name) VALUES ($1, $2)`, user, name)
	return err
}

// Redeem handles the unique violation of its insert: a unique index stands behind it,
// and the loser of the race is told, not duplicated.
func (s *Store) Redeem(ctx context.Context, code string) error {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM redemptions WHERE code = $1`, code).Scan(&n); err != nil || n > 0 {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO redemptions (code) VALUES ($1)`, code)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return ErrTaken
	}
	return err
}

// AddSubtask reads the parent's children by parent_id, then inserts a task by project
// and title: the read looks for other rows than the insert makes.
func (s *Store) AddSubtask(ctx context.Context, project int64, title string) error {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM tasks WHERE parent_id = $1`, project).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return ErrTaken
	}
	_, err := s.db.Exec(ctx, `INSERT INTO tasks (project_id, title) VALUES ($1, $2)`, project, title)
	return err
}

// CopyInvite reads an invitation only to copy its email: the bare error check decides
// nothing.
func (s *Store) CopyInvite(ctx context.Context, id, team int64) error {
	var email string
	if err := s.db.QueryRow(ctx, `SELECT email FROM invites WHERE id = $1`, id).Scan(&email); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, `INSERT INTO invites (team_id, email) VALUES ($1, $2)`, team, email)
	return err
}

// Ignored carries an ignore with its reason.
func (s *Store) Ignored(ctx context.Context, user, target int64) error {
	var found bool
	if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM follows WHERE user_id = $1 AND target_id = $2)`, user, target).Scan(&found); err != nil || found {
		return err
	}
	//oncelint:ignore ONCE005 a nightly job removes the duplicates this lets through
	_, err := s.db.Exec(ctx, `INSERT INTO follows (user_id, target_id) VALUES ($1, $2)`, user, target)
	return err
}

type Ticket struct{ No int64 }

// Number numbers a ticket with none after the last one: the test comes before the read
// and decides nothing about the insert.
func (s *Store) Number(ctx context.Context, t *Ticket) error {
	if t.No == 0 {
		var last int64
		if err := s.db.QueryRow(ctx, `SELECT coalesce(max(no), 0) FROM tickets`).Scan(&last); err != nil {
			return err
		}
		t.No = last + 1
	}
	_, err := s.db.Exec(ctx, `INSERT INTO tickets (no) VALUES ($1)`, t.No)
	return err
}

// settings is a package-level value a read fills: a global keeps no list of its uses.
var settings struct{ limit int64 }

// LoadLimit reads into a field of a global, then inserts nothing: no finding, and no
// failure to read it.
func (s *Store) LoadLimit(ctx context.Context) error {
	return s.db.QueryRow(ctx, `SELECT max_invites FROM settings WHERE id = 1`).Scan(&settings.limit)
}

// RecordLimit stores a read's value into the global's field.
func (s *Store) RecordLimit(ctx context.Context) error {
	var n int64
	if err := s.db.QueryRow(ctx, `SELECT max_invites FROM settings WHERE id = 1`).Scan(&n); err != nil {
		return err
	}
	settings.limit = n
	return nil
}
