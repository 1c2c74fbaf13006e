package xormapp

import (
	"xorm.io/xorm"
)

// Board is numbered by the database; Pin marks a board for a user.
type Board struct {
	Id   int64 `xorm:"pk autoincr"`
	Name string
}

type Pin struct {
	Id      int64 `xorm:"pk autoincr"`
	BoardId int64
	UserId  int64
}

// CreateBoard inserts the board, then pins it for its creator unless a pin exists: the
// pin is keyed by the board's id, numbered for this call, so no other call pins it.
func CreateBoard(s *xorm.Session, b *Board, userID int64) error {
	if _, err := s.Insert(b); err != nil {
		return err
	}
	has, err := s.Exist(&Pin{BoardId: b.Id, UserId: userID})
	if err != nil {
		return err
	}
	if has {
		return nil
	}
	_, err = s.Insert(&Pin{BoardId: b.Id, UserId: userID})
	return err
}

// CreateFirstBoard pins the new board only if the user has no pin at all: the check is
// on the user, which the board's new id does not reach, and two calls both pin.
func CreateFirstBoard(s *xorm.Session, b *Board, userID int64) error {
	if _, err := s.Insert(b); err != nil {
		return err
	}
	has, err := s.Exist(&Pin{UserId: userID})
	if err != nil {
		return err
	}
	if has {
		return nil
	}
	_, err = s.Insert(&Pin{BoardId: b.Id, UserId: userID}) // want `insert into pin is decided by a read of pin`
	return err
}
