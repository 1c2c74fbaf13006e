// Package builders checks and inserts through the query builders squirrel and sqlf, and
// through SQL text made with fmt.Sprintf and a table-prefix helper.
package builders

import (
	"context"
	"database/sql"
	"fmt"

	sq "github.com/Masterminds/squirrel"
	"github.com/leporo/sqlf"
)

type repo struct {
	db  *sql.DB
	sql sq.StatementBuilderType
}

var prefix string

// tenant names a table of the configured tenant.
func tenant(table string) string { return fmt.Sprintf("%s%s", prefix, table) }

// CacheItem reads through squirrel's ToSql and inserts when the item is absent: nothing
// makes (feed_id, guid) unique.
func (r *repo) CacheItem(ctx context.Context, feedID int, guid string) error {
	q, args, err := r.sql.Select("1").Prefix("SELECT EXISTS (").From("feed_cache").
		Where(sq.Eq{"feed_id": feedID}).Where(sq.Eq{"guid": guid}).Suffix(")").ToSql()
	if err != nil {
		return err
	}
	var exists bool
	if err := r.db.QueryRowContext(ctx, q, args...).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	ins, args, err := sq.Insert("feed_cache").Columns("feed_id", "guid").Values(feedID, guid).ToSql()
	if err != nil {
		return err
	}
	_, err = r.db.ExecContext(ctx, ins, args...) // want `insert into feed_cache is decided by a read of feed_cache with no lock, no conflict clause and no unique constraint on \(feed_id, guid\)`
	return err
}

// CacheKey is CacheItem on feed_keys, unique on (feed_id, key): the second insert fails.
func (r *repo) CacheKey(ctx context.Context, feedID int, key string) error {
	var n int
	if err := r.sql.Select("COUNT(*)").From("feed_keys").Where(sq.Eq{"feed_id": feedID}).Where("key = ?", key).RunWith(r.db).QueryRowContext(ctx).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := sq.Insert("feed_keys").Columns("feed_id", "key").Values(feedID, key).RunWith(r.db).ExecContext(ctx)
	return err
}

// CacheItemOnce is CacheItem whose insert ignores a conflict.
func (r *repo) CacheItemOnce(ctx context.Context, feedID int, guid string) error {
	var exists bool
	if err := sq.Select("1").From("feed_cache").Where(sq.Eq{"feed_id": feedID, "guid": guid}).RunWith(r.db).Scan(&exists); err != nil && err != sql.ErrNoRows {
		return err
	}
	if exists {
		return nil
	}
	_, err := sq.Insert("feed_cache").Columns("feed_id", "guid").Values(feedID, guid).Suffix("ON CONFLICT DO NOTHING").RunWith(r.db).Exec()
	return err
}

// TagMessage counts through sqlf, into a table the tenant prefix names, and inserts when
// the count is zero.
func TagMessage(ctx context.Context, db *sql.DB, id string, tagID int) error {
	var n int
	if err := sqlf.From(tenant("message_tags")).Select("COUNT(ID)").To(&n).
		Where("ID = ?", id).Where("TagID = ?", tagID).QueryRowAndClose(ctx, db); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := sqlf.InsertInto(tenant("message_tags")).Set("ID", id).Set("TagID", tagID).ExecAndClose(ctx, db) // want `insert into message_tags is decided by a read of message_tags with no lock, no conflict clause and no unique constraint on \(id, tagid\)`
	return err
}

// messageIDExists is a read whose answer its caller acts on.
func messageIDExists(ctx context.Context, db *sql.DB, messageID string) bool {
	var total int
	_ = sqlf.From(tenant("mailbox")).Select("COUNT(*)").To(&total).Where("MessageID = ?", messageID).QueryRowAndClose(ctx, db)
	return total != 0
}

// Store inserts SQL text made with fmt.Sprintf around the tenant's table name.
func Store(ctx context.Context, db *sql.DB, id, messageID string) error {
	if messageIDExists(ctx, db, messageID) {
		return nil
	}
	q := fmt.Sprintf(`INSERT INTO %s (ID, MessageID) VALUES (?, ?)`, tenant("mailbox"))
	_, err := db.ExecContext(ctx, q, id, messageID) // want `insert into mailbox is decided by a read of mailbox by builders.messageIDExists with no lock, no conflict clause and no unique constraint on \(messageid\)`
	return err
}

// StoreIn names its table by a parameter no call here fixes: the statement is not read.
func StoreIn(ctx context.Context, db *sql.DB, table, id string) error {
	var n int
	if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE id = ?`, table), id).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (id) VALUES (?)`, table), id)
	return err
}

// Migrate records a version once: the table it creates at start-up, in text joined with +,
// makes version its primary key, so a second insert fails.
func Migrate(db *sql.DB, version string) error {
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS ` + tenant("versions") + ` (version TEXT PRIMARY KEY NOT NULL)`); err != nil {
		return err
	}
	var done int
	if err := db.QueryRow(`SELECT EXISTS(SELECT 1 FROM `+tenant("versions")+` WHERE version = ?)`, version).Scan(&done); err != nil {
		return err
	}
	if done == 0 {
		_, err := db.Exec(`INSERT INTO `+tenant("versions")+` (version) VALUES (?)`, version)
		return err
	}
	return nil
}

// Subscribe is Migrate's check on a table nothing makes unique, in text joined with +.
func Subscribe(db *sql.DB, email string) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM `+tenant("subscribers")+` WHERE email = ?`, email).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := db.Exec(`INSERT INTO `+tenant("subscribers")+` (email) VALUES (?)`, email) // want `insert into subscribers is decided by a read of subscribers with no lock, no conflict clause and no unique constraint on \(email\)`
	return err
}

// Invite reads and inserts text joined from many parts; nothing makes (org, email) unique.
func Invite(db *sql.DB, schema, org, email string) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) `+`FROM `+tenant("invites")+` WHERE `+`org = ?`+` AND `+`email = ?`+``+``+``, org, email).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := db.Exec(`INSERT INTO `+tenant("invites")+` (`+`org, `+`email`+`) `+`VALUES `+`(?, `+`?)`+``+``+``, org, email) // want `insert into invites is decided by a read of invites with no lock, no conflict clause and no unique constraint on \(org, email\)`
	return err
}
