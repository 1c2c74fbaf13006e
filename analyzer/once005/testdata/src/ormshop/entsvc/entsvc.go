// Package entsvc imports vouchers through the repository: the decision is here.
package entsvc

import (
	"context"

	"ormshop/entrepo"
)

// Service imports vouchers.
type Service struct{ repo *entrepo.Vouchers }

// Import skips the codes it finds, through a flag, and creates the others: two imports of
// one file both find a code absent and both create it.
func (s *Service) Import(ctx context.Context, campaign int, codes []string) error {
	for _, code := range codes {
		create := true
		exists, err := s.repo.CheckCode(ctx, campaign, code)
		if err != nil {
			return err
		}
		if exists {
			create = false
		}
		if create {
			if _, err := s.repo.Create(ctx, campaign, code); err != nil { // want `insert into vouchers by \(\*entrepo.Vouchers\).Create is decided by a read of vouchers by \(\*entrepo.Vouchers\).CheckCode`
				return err
			}
		}
	}
	return nil
}

// Copy creates a second voucher only where the code is already held: the insert follows
// from a row found, not from one missing.
func (s *Service) Copy(ctx context.Context, campaign int, code string) error {
	held := false
	exists, err := s.repo.CheckCode(ctx, campaign, code)
	if err != nil {
		return err
	}
	if exists {
		held = true
	}
	if held {
		_, err = s.repo.Create(ctx, campaign+1, code)
	}
	return err
}
