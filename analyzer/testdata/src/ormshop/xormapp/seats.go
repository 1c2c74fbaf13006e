package xormapp

import (
	"encoding/json"

	"github.com/google/uuid"
	"xorm.io/xorm"

	"ormshop/models"
)

// A seat's primary key is (owner, name), neither made by the database. Each function
// below looks for the holder's seat by (owner, holder), which no unique constraint
// covers, then inserts one: whether the insert is safe depends on where the seat's
// name comes from.

// TakeSeat inserts the seat it is given: a double submit gives the same (owner, name),
// and the second insert fails on the primary key.
func TakeSeat(engine *xorm.Engine, seat *models.Seat) error {
	if seat.Owner == "" {
		seat.Owner = "public"
	}
	has, err := engine.Exist(&models.Seat{Owner: seat.Owner, Holder: seat.Holder})
	if err != nil {
		return err
	}
	if has {
		return ErrTaken
	}
	_, err = engine.Insert(seat)
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

// TakeSeatNamed builds the seat from the caller's owner and name, through a
// constructor of another package that keeps them.
func TakeSeatNamed(engine *xorm.Engine, owner, name, holder string) error {
	if has, _ := engine.Exist(&models.Seat{Owner: owner, Holder: holder}); has {
		return ErrTaken
	}
	seat := models.SeatFor(owner, name, holder)
	_, err := engine.Insert(seat)
	return err
}

// TakeSeats seats each holder of a batch who has no seat yet, in one insert: the rows
// are made from the names the caller gives.
func TakeSeats(engine *xorm.Engine, owner string, names map[string]string) error {
	var seated []models.Seat
	if err := engine.Find(&seated, &models.Seat{Owner: owner}); err != nil {
		return err
	}
	byHolder := map[string]models.Seat{}
	for _, s := range seated {
		byHolder[s.Holder] = s
	}
	var todo []*models.Seat
	for holder, name := range names {
		if _, ok := byHolder[holder]; !ok {
			todo = append(todo, models.SeatFor(owner, name, holder))
		}
	}
	if len(byHolder) < len(names) {
		_, err := engine.Insert(todo)
		return err
	}
	return nil
}

// TakeRandomSeat names the seat with a UUID: two calls make two names, and both insert.
func TakeRandomSeat(engine *xorm.Engine, owner, holder string) error {
	if has, _ := engine.Exist(&models.Seat{Owner: owner, Holder: holder}); has {
		return ErrTaken
	}
	seat := &models.Seat{Owner: owner, Name: "seat-" + uuid.NewString(), Holder: holder}
	_, err := engine.Insert(seat) // want `insert into seat is decided by a read of seat`
	return err
}

// TakeTimedSeat gets its seat from a constructor of another package that names it by
// the clock: the name is new on each call.
func TakeTimedSeat(engine *xorm.Engine, owner, holder string) error {
	if has, _ := engine.Exist(&models.Seat{Owner: owner, Holder: holder}); has {
		return ErrTaken
	}
	seat := models.NewSeat(owner, holder)
	_, err := engine.Insert(seat) // want `insert into seat is decided by a read of seat`
	return err
}

// TakeSeatLikeTimed copies the name of a seat made by the clock-naming constructor into
// its own: the name is still new on each call.
func TakeSeatLikeTimed(engine *xorm.Engine, owner, holder string) error {
	if has, _ := engine.Exist(&models.Seat{Owner: owner, Holder: holder}); has {
		return ErrTaken
	}
	draft := models.NewSeat(owner, holder)
	seat := &models.Seat{Owner: owner, Name: draft.Name, Holder: holder}
	_, err := engine.Insert(seat) // want `insert into seat is decided by a read of seat`
	return err
}

// TakeSeatOrDraw keeps the given name, but draws one when it is missing: on that path
// two calls make two names.
func TakeSeatOrDraw(engine *xorm.Engine, seat *models.Seat) error {
	if has, _ := engine.Exist(&models.Seat{Owner: seat.Owner, Holder: seat.Holder}); has {
		return ErrTaken
	}
	if seat.Name == "" {
		seat.Name = models.DrawSeatName()
	}
	_, err := engine.Insert(seat) // want `insert into seat is decided by a read of seat`
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

// Award inserts the badge it is given, but the model's BeforeInsert draws a code for a
// badge with none: the key is not the caller's.
func Award(engine *xorm.Engine, b *models.Badge) error {
	if has, _ := engine.Exist(&models.Badge{Owner: b.Owner, Holder: b.Holder}); has {
		return ErrTaken
	}
	_, err := engine.Insert(b) // want `insert into badge is decided by a read of badge`
	return err
}
