// Package grants applies purchased storage grants and emails the buyer, the way a store
// that makes "the insert the check" by hand writes it: a plain INSERT under the table's
// primary key, its error checked before the email. A repeat fails with a unique
// violation and sends nothing, so the email is covered. It is not when the key is minted
// in the call, when the insert runs in a branch, or when no unique constraint covers it.
package grants

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/smtp"
)

type Store struct{ db *sql.DB }

// insertGrant inserts the grant under a key made from what it is given: a repeat's
// insert fails, and its error says so.
func (s *Store) insertGrant(ctx context.Context, kind string, userID, storage int64) error {
	grantID := fmt.Sprintf("%s-%d", kind, userID)
	_, err := s.db.ExecContext(ctx, `INSERT INTO storage_grants (grant_id, user_id, storage) VALUES ($1, $2, $3)`, grantID, userID, storage)
	if err != nil {
		return err
	}
	return nil
}

// ApplyGrant emails only once the grant's insert succeeded: covered.
func (s *Store) ApplyGrant(ctx context.Context, email string, userID, storage int64) error {
	if err := s.insertGrant(ctx, "BF2024", userID, storage); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "store@shop.test", []string{email}, []byte("Your storage is on its way"))
}

// recordGrant returns the insert's error wrapped, as its last statement, the way a
// repository's Insert does: a repeat's unique violation comes back through it.
func (s *Store) recordGrant(ctx context.Context, userID, storage int64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO storage_grants (grant_id, user_id, storage) VALUES ($1, $2, $3)`, fmt.Sprint(userID), userID, storage)
	return fmt.Errorf("record grant: %w", err)
}

// ApplyWelcomeGrant emails once the wrapped insert succeeded: covered.
func (s *Store) ApplyWelcomeGrant(ctx context.Context, email string, userID, storage int64) error {
	if err := s.recordGrant(ctx, userID, storage); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "store@shop.test", []string{email}, []byte("Welcome storage"))
}

// logGrant returns the error of an insert no unique constraint covers: no latch.
func (s *Store) logGrant(ctx context.Context, userID int64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO grant_log (user_id, note) VALUES ($1, $2)`, userID, "granted")
	return fmt.Errorf("log grant: %w", err)
}

// ApplyLogged emails after it: reported.
func (s *Store) ApplyLogged(ctx context.Context, email string, userID int64) error {
	if err := s.logGrant(ctx, userID); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "store@shop.test", []string{email}, []byte("Logged")) // want `call to smtp.SendMail has no //once: promise`
}

// insertMinted keys the grant by a random id: no repeat ever conflicts.
func (s *Store) insertMinted(ctx context.Context, userID, storage int64) error {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	_, err := s.db.ExecContext(ctx, `INSERT INTO storage_grants (grant_id, user_id, storage) VALUES ($1, $2, $3)`, hex.EncodeToString(b), userID, storage)
	return err
}

// ApplyGift emails after an insert a repeat makes again: reported.
func (s *Store) ApplyGift(ctx context.Context, email string, userID, storage int64) error {
	if err := s.insertMinted(ctx, userID, storage); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "store@shop.test", []string{email}, []byte("A gift")) // want `call to smtp.SendMail has no //once: promise`
}

// upsertGrant inserts when the grant is new and updates it otherwise: its error tells
// nothing about a repeat.
func (s *Store) upsertGrant(ctx context.Context, exists bool, userID, storage int64) error {
	var err error
	if !exists {
		_, err = s.db.ExecContext(ctx, `INSERT INTO storage_grants (grant_id, user_id, storage) VALUES ($1, $2, $3)`, fmt.Sprint(userID), userID, storage)
	} else {
		_, err = s.db.ExecContext(ctx, `UPDATE storage_grants SET storage = $1 WHERE user_id = $2`, storage, userID)
	}
	return err
}

// Renew emails after either: reported.
func (s *Store) Renew(ctx context.Context, email string, exists bool, userID, storage int64) error {
	if err := s.upsertGrant(ctx, exists, userID, storage); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "store@shop.test", []string{email}, []byte("Renewed")) // want `call to smtp.SendMail has no //once: promise`
}

// Note logs into a table no unique constraint covers: a repeat inserts again, and
// emails again.
func (s *Store) Note(ctx context.Context, email string, userID int64) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO grant_log (user_id, note) VALUES ($1, $2)`, userID, "noted"); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "store@shop.test", []string{email}, []byte("Noted")) // want `call to smtp.SendMail has no //once: promise`
}

// recordQuietly maps the insert's unique violation to nil: a repeat looks like a first
// call, so its error is no latch.
func (s *Store) recordQuietly(ctx context.Context, userID, storage int64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO storage_grants (grant_id, user_id, storage) VALUES ($1, $2, $3)`, fmt.Sprint(userID), userID, storage)
	return ignoreDuplicate(err)
}

func ignoreDuplicate(err error) error { return err }

// ApplyQuietly emails after it: reported.
func (s *Store) ApplyQuietly(ctx context.Context, email string, userID, storage int64) error {
	if err := s.recordQuietly(ctx, userID, storage); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "store@shop.test", []string{email}, []byte("Quiet")) // want `call to smtp.SendMail has no //once: promise`
}
