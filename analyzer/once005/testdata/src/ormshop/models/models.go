// Package models holds the shop's ORM models. It imports no ORM: the tables its models
// name, and the unique columns their tags declare, travel to the packages that use them
// as facts.
package models

import (
	"math/rand"
	"strconv"
	"time"
)

// User's email is unique in the migrations (users_email_key).
type User struct {
	ID    int64
	Email string
	Name  string
}

// Invite has no unique constraint: a team can be invited twice.
type Invite struct {
	ID     int64
	TeamID int64
	Email  string
}

// Team is the parent of invites and memberships.
type Team struct {
	ID    int64
	Seats int
}

// Membership is unique per team and user by its tags.
type Membership struct {
	ID     int64 `gorm:"primaryKey"`
	TeamID int64 `gorm:"uniqueIndex:idx_team_user"`
	UserID int64 `gorm:"uniqueIndex:idx_team_user"`
}

// Coupon lives in the promo_codes table, by its TableName method.
type Coupon struct {
	ID   int64
	Code string
}

// TableName names the table gorm reads and writes for Coupon.
func (Coupon) TableName() string { return "promo_codes" }

// Product's sku is unique by a constraint in deploy/products.ddl.
type Product struct {
	ID  int64
	SKU string
}

// Subscriber is xorm's: table subscriber, with no unique email.
type Subscriber struct {
	Id    int64
	Email string
}

// Follower is xorm's, unique by its tag.
type Follower struct {
	Id     int64
	Handle string `xorm:"not null default '' VARCHAR(64) UNIQUE"`
}

// Org is xorm's parent row.
type Org struct {
	Id    int64
	Plan  string
	Since time.Time
}

// Account signs in through GitHub: its username is unique, its GitHub id only indexed.
type Account struct {
	ID       int64
	Username string `gorm:"unique;index"`
	GitHubID string `gorm:"column:github_id;index"`
	Token    string `gorm:"uniqueIndex"`
}

// Seat is xorm's, keyed by (owner, name).
type Seat struct {
	Owner  string `xorm:"varchar(100) notnull pk"`
	Name   string `xorm:"varchar(100) notnull pk"`
	Holder string `xorm:"varchar(100)"`
}

// NewSeat makes a holder's seat under a name no other call makes: the clock's.
func NewSeat(owner, holder string) *Seat {
	return &Seat{Owner: owner, Name: holder + "-" + time.Now().Format("150405.000000"), Holder: holder}
}

// SeatFor makes a holder's seat under the name the caller gives.
func SeatFor(owner, name, holder string) *Seat {
	return &Seat{Owner: owner, Name: name, Holder: holder}
}

// DrawSeatName makes a name no other call makes.
func DrawSeatName() string { return "s" + strconv.Itoa(rand.Intn(1_000_000)) }

// Booking is xorm's, numbered by the database.
type Booking struct {
	Id     int64  `xorm:"pk autoincr"`
	Room   string `xorm:"varchar(100)"`
	Holder string `xorm:"varchar(100)"`
}

// Badge is xorm's, keyed by (owner, code); its hook names a badge with no code.
type Badge struct {
	Owner  string `xorm:"varchar(100) notnull pk"`
	Code   string `xorm:"varchar(100) notnull pk"`
	Holder string `xorm:"varchar(100)"`
}

// BeforeInsert gives a badge with no code a random one.
func (b *Badge) BeforeInsert() {
	if b.Code == "" {
		b.Code = strconv.Itoa(rand.Int())
	}
}

// Locker is gorm's, keyed by its number.
type Locker struct {
	Number int64  `gorm:"primaryKey"`
	Holder string `gorm:"index"`
}

// Member is xorm's: a club's members, numbered in the club by Seq, with no unique
// constraint.
type Member struct {
	Id   int64  `xorm:"pk autoincr"`
	Club string `xorm:"varchar(100)"`
	Seq  int
	Name string `xorm:"varchar(100)"`
}

// Guest has a string id its callers may give, and no unique email.
type Guest struct {
	ID    string `gorm:"primaryKey"`
	Email string
}
