// Package dbtx is sqlc's shape: queries through an interface of the application's own,
// which pgx's types implement, so its calls are pgx's.
package dbtx

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

type DBTX interface {
	Exec(context.Context, string, ...interface{}) (pgconn.CommandTag, error)
	QueryRow(context.Context, string, ...interface{}) pgx.Row
}

type Queries struct{ db DBTX }

type Member struct{ ID, Org, User int64 }

const getMember = `SELECT id, org_id, user_id FROM members WHERE org_id = $1 AND user_id = $2`

func (q *Queries) GetMember(ctx context.Context, org, user int64) (Member, error) {
	row := q.db.QueryRow(ctx, getMember, org, user)
	var m Member
	err := row.Scan(&m.ID, &m.Org, &m.User)
	return m, err
}

const createMember = `INSERT INTO members (org_id, user_id) VALUES ($1, $2)`

func (q *Queries) CreateMember(ctx context.Context, org, user int64) error {
	_, err := q.db.Exec(ctx, createMember, org, user)
	return err
}

// AddMember is the service over the generated queries: GetMember's error means "no
// row", as QueryRow's does.
func AddMember(ctx context.Context, q *Queries, org, user int64) error {
	_, err := q.GetMember(ctx, org, user)
	if err == nil {
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return q.CreateMember(ctx, org, user) // want `insert into members by \(\*dbtx.Queries\).CreateMember is decided by a read of members by \(\*dbtx.Queries\).GetMember`
}
