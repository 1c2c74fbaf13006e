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
