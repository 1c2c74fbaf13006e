// Package bunapp sells seats through bun.
package bunapp

import (
	"context"
	"errors"

	"github.com/uptrace/bun"
)

var ErrTaken = errors.New("already there")

// Ticket lives in event_tickets, by its bun tag.
type Ticket struct {
	bun.BaseModel `bun:"table:event_tickets,alias:t"`

	ID      int64 `bun:",pk,autoincrement"`
	EventID int64
	Seat    string
}

// Hold is unique per event and seat by its tags.
type Hold struct {
	ID      int64  `bun:",pk"`
	EventID int64  `bun:"event_id,unique:event_seat"`
	Seat    string `bun:"seat,unique:event_seat"`
}

// Event is the parent row.
type Event struct {
	ID    int64
	Seats int
}

// Sell looks for the seat's ticket, then inserts one: two buyers both see the seat free.
func Sell(ctx context.Context, db *bun.DB, eventID int64, seat string) error {
	exists, err := db.NewSelect().Model((*Ticket)(nil)).Where("event_id = ? AND seat = ?", eventID, seat).Exists(ctx)
	if err != nil {
		return err
	}
	if exists {
		return ErrTaken
	}
	t := &Ticket{EventID: eventID, Seat: seat}
	_, err = db.NewInsert().Model(t).Exec(ctx) // want `insert into event_tickets is decided by a read of event_tickets with no lock, no conflict clause`
	return err
}

// SellOnConflict lets the insert decide.
func SellOnConflict(ctx context.Context, db *bun.DB, eventID int64, seat string) error {
	var t Ticket
	if err := db.NewSelect().Model(&t).Where("event_id = ? AND seat = ?", eventID, seat).Scan(ctx); err == nil {
		return ErrTaken
	}
	_, err := db.NewInsert().Model(&Ticket{EventID: eventID, Seat: seat}).On("CONFLICT (event_id, seat) DO NOTHING").Exec(ctx)
	return err
}

// SellUnderEventLock holds the event's row first.
func SellUnderEventLock(ctx context.Context, db *bun.DB, eventID int64, seat string) error {
	var ev Event
	if err := db.NewSelect().Model(&ev).Where("id = ?", eventID).For("UPDATE").Scan(ctx); err != nil {
		return err
	}
	n, err := db.NewSelect().Model((*Ticket)(nil)).Where("event_id = ? AND seat = ?", eventID, seat).Count(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return ErrTaken
	}
	_, err = db.NewInsert().Model(&Ticket{EventID: eventID, Seat: seat}).Exec(ctx)
	return err
}

// HoldSeat is unique per event and seat by the model's tags.
func HoldSeat(ctx context.Context, db *bun.DB, eventID int64, seat string) error {
	if ok, _ := db.NewSelect().Model((*Hold)(nil)).Where("event_id = ? AND seat = ?", eventID, seat).Exists(ctx); ok {
		return ErrTaken
	}
	_, err := db.NewInsert().Model(&Hold{EventID: eventID, Seat: seat}).Exec(ctx)
	return err
}
