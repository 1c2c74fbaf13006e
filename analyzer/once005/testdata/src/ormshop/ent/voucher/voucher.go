// Package voucher holds the generated predicates of the Voucher entity, in the two
// forms ent has generated them in.
package voucher

import (
	"entgo.io/ent/dialect/sql"

	"ormshop/ent/predicate"
)

const (
	FieldCode       = "code"
	FieldCampaignID = "campaign_id"
)

func CodeEQ(v string) predicate.Voucher { return predicate.Voucher(sql.FieldEQ(FieldCode, v)) }

func And(ps ...predicate.Voucher) predicate.Voucher {
	return predicate.Voucher(func(s *sql.Selector) {})
}

func CampaignID(v int) predicate.Voucher {
	return predicate.Voucher(func(s *sql.Selector) { s.Where(sql.EQ(s.C(FieldCampaignID), v)) })
}
