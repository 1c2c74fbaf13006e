// Package xormapp keeps a newsletter's subscribers through xorm.
package xormapp

import (
	"errors"
	"strings"

	forkxorm "github.com/xorm-io/xorm"
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

// JoinOrgs records each address in each organisation, in one transaction that holds
// the organisations' rows first: the check-then-insert addSubscriber makes runs
// serialised by its callers' lock.
func JoinOrgs(engine *xorm.Engine, orgIDs []int64, email string) error {
	_, err := engine.Transaction(func(sess *xorm.Session) (any, error) {
		if err := lockOrgs(sess, orgIDs); err != nil {
			return nil, err
		}
		return nil, addSubscriber(sess, email)
	})
	return err
}

// JoinOrg does the same for one organisation, its row locked in the same closure.
func JoinOrg(engine *xorm.Engine, orgID int64, email string) error {
	_, err := engine.Transaction(func(sess *xorm.Session) (any, error) {
		var org models.Org
		if _, err := sess.ID(orgID).ForUpdate().Get(&org); err != nil {
			return nil, err
		}
		return nil, addSubscriber(sess, email)
	})
	return err
}

func lockOrgs(sess *xorm.Session, ids []int64) error {
	var orgs []models.Org
	return sess.In("id", ids).ForUpdate().Find(&orgs)
}

// addSubscriber checks then inserts; its callers lock.
func addSubscriber(sess *xorm.Session, email string) error {
	if ok, _ := sess.Where("email = ?", email).Exist(&models.Subscriber{}); ok {
		return ErrTaken
	}
	_, err := sess.Insert(&models.Subscriber{Email: email})
	return err
}

// Invite calls its helper in a transaction that locks nothing, and ImportOne calls it
// after locking through another session than the one it passes: neither lock holds
// while the helper checks, so the helper is reported.
func Invite(engine *xorm.Engine, email string) error {
	_, err := engine.Transaction(func(sess *xorm.Session) (any, error) {
		return nil, addInvitee(sess, email)
	})
	return err
}

func ImportOne(engine *xorm.Engine, orgID int64, email string) error {
	other := engine.NewSession()
	if _, err := other.ID(orgID).ForUpdate().Get(&models.Org{}); err != nil {
		return err
	}
	sess := engine.NewSession()
	return addInvitee(sess, email)
}

func InviteUnderOrgLock(engine *xorm.Engine, orgID int64, email string) error {
	_, err := engine.Transaction(func(sess *xorm.Session) (any, error) {
		if err := lockOrgs(sess, []int64{orgID}); err != nil {
			return nil, err
		}
		return nil, addInvitee(sess, email)
	})
	return err
}

// addInvitee checks then inserts; one of its callers locks nothing.
func addInvitee(sess *xorm.Session, email string) error {
	if ok, _ := sess.Where("email = ?", email).Exist(&models.Subscriber{}); ok {
		return ErrTaken
	}
	_, err := sess.Insert(&models.Subscriber{Email: email}) // want `insert into subscriber is decided by a read of subscriber`
	return err
}

// SubscribeExclusive checks only for an exclusive list, in a block of its own: the
// return in it decides the insert after the block.
func SubscribeExclusive(engine *xorm.Engine, exclusive bool, email string) error {
	if exclusive {
		has, err := engine.Where("email = ?", email).Exist(&models.Subscriber{})
		if err != nil {
			return err
		}
		if has {
			return ErrTaken
		}
	}
	_, err := engine.Insert(&models.Subscriber{Email: email}) // want `insert into subscriber is decided by a read of subscriber`
	return err
}

// SubscribeEach checks each address in a switch nested in the loop: its continue skips
// the insert of that address.
func SubscribeEach(engine *xorm.Engine, emails []string) error {
	for _, email := range emails {
		has, _ := engine.Where("email = ?", email).Exist(&models.Subscriber{})
		switch {
		case email == "":
		default:
			if has {
				continue
			}
		}
		if _, err := engine.Insert(&models.Subscriber{Email: email}); err != nil { // want `insert into subscriber is decided by a read of subscriber`
			return err
		}
	}
	return nil
}

// SubscribeOnMySQL inserts when absent and lets a racing twin fail on MySQL's unique
// index, recognised by the error's text.
func SubscribeOnMySQL(engine *xorm.Engine, handle string) error {
	if ok, _ := engine.Where("email = ?", handle).Exist(&models.Subscriber{}); ok {
		return ErrTaken
	}
	if _, err := engine.Insert(&models.Subscriber{Email: handle}); err != nil && !strings.Contains(err.Error(), "Duplicate entry") {
		return err
	}
	return nil
}

// Reserve looks the seat up by its primary key, through a bean made of it, and inserts
// that key: the second of two racing inserts fails on the primary key.
func Reserve(engine *xorm.Engine, owner, name string) error {
	seat := models.Seat{Owner: owner, Name: name}
	has, err := engine.Get(&seat)
	if err != nil {
		return err
	}
	if has {
		return ErrTaken
	}
	_, err = engine.Insert(&seat)
	return err
}

// ReserveFor looks for the holder's seat and inserts one under a fresh name: the
// primary key does not stop two racing calls from both inserting.
func ReserveFor(engine *xorm.Engine, owner, holder string, fresh func() string) error {
	seat := &models.Seat{Owner: owner, Holder: holder}
	has, err := engine.Get(seat)
	if err != nil {
		return err
	}
	if has {
		return ErrTaken
	}
	seat.Name = fresh()
	_, err = engine.Insert(seat) // want `insert into seat is decided by a read of seat`
	return err
}

// SubscribeFork makes the same race through a fork of xorm published under another path.
func SubscribeFork(engine *forkxorm.Engine, email string) error {
	if ok, _ := engine.Where("email = ?", email).Exist(&models.Subscriber{}); ok {
		return ErrTaken
	}
	_, err := engine.Insert(&models.Subscriber{Email: email}) // want `insert into subscriber is decided by a read of subscriber`
	return err
}
