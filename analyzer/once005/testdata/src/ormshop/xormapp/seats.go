package xormapp

import (
	"encoding/json"
	"fmt"
	"time"

	"xorm.io/xorm"

	"ormshop/models"
)

// A seat's primary key is (owner, name), neither made by the database. Each function
// below looks for the holder's seat by (owner, holder), which no unique constraint
// covers, then inserts one: whether the insert is safe depends on where the seat's
// name comes from. A double submit carries the same input: where the key is made from
// it, the second insert fails on the primary key.

// TakeSeat inserts the seat it is given: the key is the caller's.
func TakeSeat(engine *xorm.Engine, seat *models.Seat) error {
	if seat.Owner == "" {
		seat.Owner = "public"
	}
	if has, err := engine.Exist(&models.Seat{Owner: seat.Owner, Holder: seat.Holder}); err != nil || has {
		return err
	}
	_, err := engine.Insert(seat)
	return err
}

// TakeSeatFromRequest decodes the seat from the request body: the key is the client's.
func TakeSeatFromRequest(engine *xorm.Engine, body []byte) error {
	var seat models.Seat
	if err := json.Unmarshal(body, &seat); err != nil {
		return err
	}
	if has, _ := engine.Exist(&models.Seat{Owner: seat.Owner, Holder: seat.Holder}); has {
		return ErrTaken
	}
	_, err := engine.Insert(&seat)
	return err
}

// TakeNamedSeat names the seat from its input, formatted.
func TakeNamedSeat(engine *xorm.Engine, owner, holder string, row int) error {
	if has, _ := engine.Exist(&models.Seat{Owner: owner, Holder: holder}); has {
		return ErrTaken
	}
	_, err := engine.Insert(&models.Seat{Owner: owner, Name: fmt.Sprintf("%s-%d", holder, row), Holder: holder})
	return err
}

// TakeTimedSeat names the seat by the clock: a new name on each call, and both insert.
func TakeTimedSeat(engine *xorm.Engine, owner, holder string) error {
	if has, _ := engine.Exist(&models.Seat{Owner: owner, Holder: holder}); has {
		return ErrTaken
	}
	seat := &models.Seat{Owner: owner, Name: fmt.Sprintf("%s-%d", holder, time.Now().UnixNano()), Holder: holder}
	_, err := engine.Insert(seat) // want `insert into seat is decided by a read of seat`
	return err
}

// TakeDrawnSeat gets its seat from a constructor of another package: the check cannot
// see where its key comes from.
func TakeDrawnSeat(engine *xorm.Engine, owner, holder string) error {
	if has, _ := engine.Exist(&models.Seat{Owner: owner, Holder: holder}); has {
		return ErrTaken
	}
	_, err := engine.Insert(models.NewSeat(owner, holder)) // want `insert into seat is decided by a read of seat`
	return err
}

// Book inserts the booking it is given: its key is numbered by the database, so two
// calls insert two rows.
func Book(engine *xorm.Engine, b *models.Booking) error {
	if has, _ := engine.Exist(&models.Booking{Room: b.Room, Holder: b.Holder}); has {
		return ErrTaken
	}
	_, err := engine.Insert(b) // want `insert into booking is decided by a read of booking`
	return err
}
