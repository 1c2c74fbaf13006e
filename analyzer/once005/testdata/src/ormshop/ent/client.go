// Package ent is a generated ent client, cut down to what the tests call.
package ent

import (
	"context"

	"entgo.io/ent"

	"ormshop/ent/predicate"
)

var _ ent.Field

type Client struct {
	User    *UserClient
	Voucher *VoucherClient
}

type User struct {
	ID    int
	Email string
}

type Voucher struct {
	ID   int
	Code string
}

type UserClient struct{}
type UserQuery struct{}
type UserCreate struct{}
type UserMutation struct{}
type UserUpsertOne struct{}

func (c *UserClient) Query() *UserQuery   { return &UserQuery{} }
func (c *UserClient) Create() *UserCreate { return &UserCreate{} }

func (q *UserQuery) Where(ps ...predicate.User) *UserQuery    { return q }
func (q *UserQuery) ForUpdate() *UserQuery                    { return q }
func (q *UserQuery) Exist(ctx context.Context) (bool, error)  { return false, nil }
func (q *UserQuery) Only(ctx context.Context) (*User, error)  { return nil, nil }
func (c *UserCreate) SetEmail(s string) *UserCreate           { return c }
func (c *UserCreate) Mutation() *UserMutation                 { return nil }
func (c *UserCreate) Save(ctx context.Context) (*User, error) { return nil, nil }
func (c *UserCreate) OnConflict() *UserUpsertOne              { return &UserUpsertOne{} }
func (u *UserUpsertOne) Ignore() *UserUpsertOne               { return u }
func (u *UserUpsertOne) Exec(ctx context.Context) error       { return nil }

type VoucherClient struct{}
type VoucherQuery struct{}
type VoucherCreate struct{}
type VoucherMutation struct{}
type VoucherUpsertOne struct{}

func (c *VoucherClient) Query() *VoucherQuery   { return &VoucherQuery{} }
func (c *VoucherClient) Create() *VoucherCreate { return &VoucherCreate{} }

func (q *VoucherQuery) Where(ps ...predicate.Voucher) *VoucherQuery { return q }
func (q *VoucherQuery) ForUpdate() *VoucherQuery                    { return q }
func (q *VoucherQuery) Exist(ctx context.Context) (bool, error)     { return false, nil }
func (q *VoucherQuery) Only(ctx context.Context) (*Voucher, error)  { return nil, nil }
func (c *VoucherCreate) SetCode(s string) *VoucherCreate            { return c }
func (c *VoucherCreate) SetCampaignID(id int) *VoucherCreate        { return c }
func (c *VoucherCreate) Mutation() *VoucherMutation                 { return nil }
func (c *VoucherCreate) Save(ctx context.Context) (*Voucher, error) { return nil, nil }
func (c *VoucherCreate) OnConflict() *VoucherUpsertOne              { return &VoucherUpsertOne{} }
func (u *VoucherUpsertOne) Ignore() *VoucherUpsertOne               { return u }
func (u *VoucherUpsertOne) Exec(ctx context.Context) error          { return nil }

// IsConstraintError reports a constraint violation (a unique key, among others).
func IsConstraintError(err error) bool { return false }

// IsNotFound reports a query that found nothing.
func IsNotFound(err error) bool { return false }
