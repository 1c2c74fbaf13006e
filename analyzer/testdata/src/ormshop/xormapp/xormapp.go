// Package xormapp keeps a newsletter's subscribers through xorm.
package xormapp

import (
	"errors"

	"xorm.io/xorm"

	"ormshop/models"
)

var ErrTaken = errors.New("already there")

// Subscribe gets the subscriber, then inserts: two sign-ups both find none.
func Subscribe(engine *xorm.Engine, email string) error {
	has, err := engine.Where("email = ?", email).Get(&models.Subscriber{})
	if err != nil {
		return err
	}
	if has {
		return ErrTaken
	}
	_, err = engine.Insert(&models.Subscriber{Email: email}) // want `insert into subscriber is decided by a read of subscriber with no lock, no conflict clause and no unique constraint`
	return err
}

// SubscribeExist asks Exist: the same race.
func SubscribeExist(engine *xorm.Engine, email string) error {
	if ok, _ := engine.Exist(&models.Subscriber{Email: email}); ok {
		return ErrTaken
	}
	_, err := engine.InsertOne(&models.Subscriber{Email: email}) // want `insert into subscriber is decided by a read of subscriber`
	return err
}

// SubscribeUnderOrgLock holds the organisation's row first.
func SubscribeUnderOrgLock(engine *xorm.Engine, orgID int64, email string) error {
	sess := engine.NewSession()
	defer sess.Close()
	if err := sess.Begin(); err != nil {
		return err
	}
	var org models.Org
	if _, err := sess.ID(orgID).ForUpdate().Get(&org); err != nil {
		return err
	}
	if ok, _ := sess.Where("email = ?", email).Exist(&models.Subscriber{}); ok {
		return ErrTaken
	}
	if _, err := sess.Insert(&models.Subscriber{Email: email}); err != nil {
		return err
	}
	return sess.Commit()
}

// Follow is unique by the model's xorm tag.
func Follow(engine *xorm.Engine, handle string) error {
	if ok, _ := engine.Where("handle = ?", handle).Exist(&models.Follower{}); ok {
		return ErrTaken
	}
	_, err := engine.Insert(&models.Follower{Handle: handle})
	return err
}

// SubscribeAll skips an address already subscribed and inserts the rest: the test in
// the loop decides each insert after it.
func SubscribeAll(engine *xorm.Engine, emails []string) error {
	for _, email := range emails {
		has, err := engine.Where("email = ?", email).Exist(&models.Subscriber{})
		if err != nil {
			return err
		}
		if has {
			continue
		}
		if _, err := engine.Insert(&models.Subscriber{Email: email}); err != nil { // want `insert into subscriber is decided by a read of subscriber`
			return err
		}
	}
	return nil
}

// Report counts the addresses already subscribed in one loop, then records every
// address in another: the test in the first loop is over before any insert runs, so it
// decides none of them.
func Report(engine *xorm.Engine, emails []string) (known int, err error) {
	for _, email := range emails {
		has, err := engine.Where("email = ?", email).Exist(&models.Subscriber{})
		if err != nil {
			return 0, err
		}
		if has {
			known++
			continue
		}
	}
	for _, email := range emails {
		if _, err := engine.Insert(&models.Subscriber{Email: email}); err != nil {
			return 0, err
		}
	}
	return known, nil
}
