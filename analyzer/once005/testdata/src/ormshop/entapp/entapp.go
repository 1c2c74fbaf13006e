// Package entapp issues vouchers and signs users up through an ent client.
package entapp

import (
	"context"
	"errors"

	"ormshop/ent"
	"ormshop/ent/user"
	"ormshop/ent/voucher"
)

var ErrTaken = errors.New("already there")

// Issue asks whether the voucher exists, then creates it: two requests both see none.
func Issue(ctx context.Context, client *ent.Client, code string) error {
	exists, err := client.Voucher.Query().Where(voucher.CodeEQ(code)).Exist(ctx)
	if err != nil {
		return err
	}
	if exists {
		return ErrTaken
	}
	_, err = client.Voucher.Create().SetCode(code).Save(ctx) // want `insert into vouchers is decided by a read of vouchers with no lock, no conflict clause and no unique constraint on the columns it looks up: two calls can both find no row and both insert; put a unique index on vouchers's looked-up columns and make the insert the check \(OnConflict\(...\).Ignore\(\), or handle ent.IsConstraintError\), or declare //once:transaction on entapp.Issue`
	return err
}

// IssueOnly reads with Only: the same race.
func IssueOnly(ctx context.Context, client *ent.Client, campaign int, code string) error {
	if _, err := client.Voucher.Query().Where(voucher.And(voucher.CampaignID(campaign), voucher.CodeEQ(code))).Only(ctx); err == nil {
		return ErrTaken
	}
	_, err := client.Voucher.Create().SetCampaignID(campaign).SetCode(code).Save(ctx) // want `insert into vouchers is decided by a read of vouchers`
	return err
}

// IssueIgnore lets the insert decide, under OnConflict.
func IssueIgnore(ctx context.Context, client *ent.Client, code string) error {
	if ok, _ := client.Voucher.Query().Where(voucher.CodeEQ(code)).Exist(ctx); ok {
		return ErrTaken
	}
	return client.Voucher.Create().SetCode(code).OnConflict().Ignore().Exec(ctx)
}

// IssueConstraint tells the loser by ent's constraint error.
func IssueConstraint(ctx context.Context, client *ent.Client, code string) error {
	if ok, _ := client.Voucher.Query().Where(voucher.CodeEQ(code)).Exist(ctx); ok {
		return ErrTaken
	}
	_, err := client.Voucher.Create().SetCode(code).Save(ctx)
	if ent.IsConstraintError(err) {
		return ErrTaken
	}
	return err
}

// SignUp's email is Unique() in the ent schema (ent/schema/user.go).
func SignUp(ctx context.Context, client *ent.Client, email string) error {
	if ok, _ := client.User.Query().Where(user.EmailEQ(email)).Exist(ctx); ok {
		return ErrTaken
	}
	_, err := client.User.Create().SetEmail(email).Save(ctx)
	return err
}
