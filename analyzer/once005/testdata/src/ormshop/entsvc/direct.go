package entsvc

import "context"

// Add creates the code unless found.
func (s *Service) Add(ctx context.Context, campaign int, code string) error {
	exists, err := s.repo.CheckCode(ctx, campaign, code)
	if err != nil || exists {
		return err
	}
	_, err = s.repo.Create(ctx, campaign, code) // want `decided by a read`
	return err
}
