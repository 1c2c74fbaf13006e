// Package voucher holds the generated predicates of the Voucher entity.
package voucher

import "ormshop/ent/predicate"

func CodeEQ(v string) predicate.Voucher { return nil }

func And(ps ...predicate.Voucher) predicate.Voucher { return nil }

func CampaignID(v int) predicate.Voucher { return nil }
