package xormapp

import (
	"errors"

	"xorm.io/xorm"

	"ormshop/models"
)

var errNoName = errors.New("a member needs a name")

// Enroll numbers the member after a member of the club it reads, then checks the
// member's own name: the read supplies one field of the row, and the test of another
// field decides nothing about what the read found.
func Enroll(engine *xorm.Engine, m *models.Member) error {
	var last models.Member
	if _, err := engine.Where("club = ?", m.Club).Get(&last); err != nil {
		return err
	}
	m.Seq = last.Seq + 1
	if m.Name == "" {
		return errNoName
	}
	_, err := engine.Insert(m)
	return err
}

// EnrollCapped numbers the member the same way, then refuses a club that is full by the
// number it read, a value of the last row: that test decides the insert, and two calls
// can both pass it with the same number.
func EnrollCapped(engine *xorm.Engine, m *models.Member) error {
	var last models.Member
	if _, err := engine.Where("club = ?", m.Club).Get(&last); err != nil {
		return err
	}
	m.Seq = last.Seq + 1
	if m.Seq > 100 {
		return errors.New("the club is full")
	}
	_, err := engine.Insert(m) // want `insert into member is decided by a read of member`
	return err
}
