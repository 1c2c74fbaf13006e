// Package entrepo wraps the ent client in a repository, as many services do: the read and
// the insert are methods of their own, and what each sends reaches its callers as a fact.
package entrepo

import (
	"context"

	"ormshop/ent"
	"ormshop/ent/voucher"
)

// Vouchers is the vouchers' repository.
type Vouchers struct{ db *ent.Client }

// CheckCode says whether a voucher of the campaign holds the code, building its query in
// two steps.
func (r *Vouchers) CheckCode(ctx context.Context, campaign int, code string) (bool, error) {
	q := r.db.Voucher.Query().Where(voucher.CampaignID(campaign))
	return q.Where(voucher.CodeEQ(code)).Exist(ctx)
}

// Create inserts a voucher.
func (r *Vouchers) Create(ctx context.Context, campaign int, code string) (*ent.Voucher, error) {
	q := r.db.Voucher.Create().SetCampaignID(campaign)
	if code != "" {
		q.SetCode(code)
	}
	return q.Save(ctx)
}
