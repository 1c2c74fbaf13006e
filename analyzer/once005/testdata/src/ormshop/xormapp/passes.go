package xormapp

import (
	"errors"

	"xorm.io/xorm"
)

// Pass is a one-time pass to an organisation; Member the seat it gives.
type Pass struct {
	ID    int64
	Code  string
	OrgID int64
}

type Member struct {
	ID    int64
	OrgID int64
}

var errUsed = errors.New("pass used")

// Accept finds the pass, deletes it without looking at what the delete removed and
// adds a member: two acceptances both add one.
func Accept(s *xorm.Session, code string) error {
	inv := &Pass{Code: code}
	has, err := s.Get(inv)
	if err != nil || !has {
		return err
	}
	if _, err := s.Delete(inv); err != nil { // want `delete from pass is decided by a read of pass with no row lock, and nothing checks that it removed the row the insert into member goes with`
		return err
	}
	_, err = s.Insert(&Member{OrgID: inv.OrgID})
	return err
}

// AcceptOnce goes on only when its delete removed the pass.
func AcceptOnce(s *xorm.Session, code string) error {
	inv := &Pass{Code: code}
	has, err := s.Get(inv)
	if err != nil || !has {
		return err
	}
	n, err := s.Delete(inv)
	if err != nil {
		return err
	}
	if n == 0 {
		return errUsed
	}
	_, err = s.Insert(&Member{OrgID: inv.OrgID})
	return err
}
