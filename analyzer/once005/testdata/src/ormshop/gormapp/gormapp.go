// Package gormapp invites people to teams through gorm.
package gormapp

import (
	"context"
	"errors"
	"math/rand"
	"strconv"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"ormshop/models"
)

var ErrTaken = errors.New("already there")

type Service struct{ db *gorm.DB }

// Invite looks for the invitation, then creates it: two clicks both find none, and the
// invitee gets two emails. Nothing in the schema makes (team_id, email) unique.
func (s *Service) Invite(ctx context.Context, teamID int64, email string) error {
	var inv models.Invite
	err := s.db.WithContext(ctx).Where("team_id = ? AND email = ?", teamID, email).First(&inv).Error
	if err == nil {
		return ErrTaken
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return err
	}
	return s.db.WithContext(ctx).Create(&models.Invite{TeamID: teamID, Email: email}).Error // want `insert into invites is decided by a read of invites with no lock, no conflict clause and no unique constraint on \(team_id, email\)`
}

// InviteCounted counts first: the same race.
func (s *Service) InviteCounted(teamID int64, email string) error {
	var n int64
	if err := s.db.Model(&models.Invite{}).Where("team_id = ? AND email = ?", teamID, email).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return ErrTaken
	}
	return s.db.Create(&models.Invite{TeamID: teamID, Email: email}).Error // want `insert into invites is decided by a read of invites`
}

// InviteLockedRows locks the invitations it finds, which does not lock the one that is
// not there yet.
func (s *Service) InviteLockedRows(teamID int64, email string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		var inv models.Invite
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("team_id = ? AND email = ?", teamID, email).First(&inv).Error
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		return tx.Create(&models.Invite{TeamID: teamID, Email: email}).Error // want `insert into invites is decided by a read of invites`
	})
}

// Redeem reads promo_codes in SQL and creates a Coupon, whose TableName (in another
// package) says it is the same table.
func (s *Service) Redeem(code string) error {
	var n int64
	if err := s.db.Raw(`SELECT count(*) FROM promo_codes WHERE code = ?`, code).Scan(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return ErrTaken
	}
	return s.db.Create(&models.Coupon{Code: code}).Error // want `insert into promo_codes is decided by a read of promo_codes`
}

// SignUp's email is unique in the migrations (users_email_key, on lower(email)): the
// second insert fails, it does not duplicate.
func (s *Service) SignUp(email string) error {
	var u models.User
	err := s.db.Where("email = ?", email).First(&u).Error
	if err == nil {
		return ErrTaken
	}
	return s.db.Create(&models.User{Email: email}).Error
}

// InviteUnderTeamLock holds the team's row first (clause.Locking): concurrent invites
// to the team queue on it.
func (s *Service) InviteUnderTeamLock(teamID int64, email string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		var team models.Team
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&team, teamID).Error; err != nil {
			return err
		}
		var n int64
		tx.Model(&models.Invite{}).Where("team_id = ? AND email = ?", teamID, email).Count(&n)
		if n > 0 {
			return ErrTaken
		}
		return tx.Create(&models.Invite{TeamID: teamID, Email: email}).Error
	})
}

// InviteUnderQueryOption locks the team with gorm's query option.
func (s *Service) InviteUnderQueryOption(teamID int64, email string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		var team models.Team
		if err := tx.Set("gorm:query_option", "FOR UPDATE").First(&team, teamID).Error; err != nil {
			return err
		}
		var inv models.Invite
		if err := tx.Where("team_id = ? AND email = ?", teamID, email).First(&inv).Error; err == nil {
			return ErrTaken
		}
		return tx.Create(&models.Invite{TeamID: teamID, Email: email}).Error
	})
}

// InviteDoNothing lets the insert decide, under a conflict clause.
func (s *Service) InviteDoNothing(teamID int64, email string) error {
	var n int64
	s.db.Model(&models.Invite{}).Where("team_id = ? AND email = ?", teamID, email).Count(&n)
	if n > 0 {
		return ErrTaken
	}
	return s.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&models.Invite{TeamID: teamID, Email: email}).Error
}

// InviteDuplicate checks the insert's error for a duplicate key: a unique index stands
// behind it, and the loser is told.
func (s *Service) InviteDuplicate(teamID int64, email string) error {
	var inv models.Invite
	if err := s.db.Where("team_id = ? AND email = ?", teamID, email).First(&inv).Error; err == nil {
		return ErrTaken
	}
	err := s.db.Create(&models.Invite{TeamID: teamID, Email: email}).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return ErrTaken
	}
	return err
}

// Join is unique per team and user by the model's uniqueIndex tags.
func (s *Service) Join(teamID, userID int64) error {
	var m models.Membership
	if err := s.db.Where("team_id = ? AND user_id = ?", teamID, userID).First(&m).Error; err == nil {
		return ErrTaken
	}
	return s.db.Create(&models.Membership{TeamID: teamID, UserID: userID}).Error
}

// Copy reads a user only to copy a value: the read decides nothing.
func (s *Service) Copy(userID, teamID int64) error {
	var u models.User
	if err := s.db.First(&u, userID).Error; err != nil {
		return err
	}
	return s.db.Create(&models.Invite{TeamID: teamID, Email: u.Email}).Error
}

func (s *Service) gitHubTaken(id string) bool {
	var n int64
	s.db.Model(&models.Account{}).Where("github_id = ?", id).Count(&n)
	return n > 0
}

func (s *Service) maxAccountID() int64 {
	var last models.Account
	s.db.Last(&last)
	return last.ID
}

// SignInWithGitHub creates the account when the GitHub id is new, named after the
// table's last id: two racing sign-ins read the same last id, make the same unique
// username, and the second insert fails.
func (s *Service) SignInWithGitHub(id string) error {
	if s.gitHubTaken(id) {
		return nil
	}
	acc := models.Account{GitHubID: id}
	acc.Username = "github_" + strconv.FormatInt(s.maxAccountID()+1, 10)
	return s.db.Create(&acc).Error
}

// SignInWithGitHubToken names the account by a fresh random token: unique, but two
// racing sign-ins make two tokens and both insert.
func (s *Service) SignInWithGitHubToken(id string, token func() string) error {
	if s.gitHubTaken(id) {
		return nil
	}
	acc := models.Account{GitHubID: id}
	acc.Token = token()
	acc.Username = "github_" + token()
	return s.db.Create(&acc).Error // want `insert into accounts is decided by a read of accounts by \(\*gormapp.Service\).gitHubTaken`
}

// CopyInvites copies a team's invitations to another team: the insert is of the rows
// the read found, made only when it found some; it looks for nothing absent.
func (s *Service) CopyInvites(from, to int64) error {
	var invs []models.Invite
	if err := s.db.Where("team_id = ?", from).Find(&invs).Error; err != nil {
		return err
	}
	if len(invs) > 0 {
		for i := range invs {
			invs[i].ID = 0
			invs[i].TeamID = to
		}
		return s.db.Create(&invs).Error
	}
	return nil
}

func (s *Service) findInvite(teamID int64, email string) *models.Invite {
	var inv models.Invite
	if s.db.Where("team_id = ? AND email = ?", teamID, email).First(&inv).Error != nil {
		return nil
	}
	return &inv
}

// Reinvite adds a fresh invitation only when one is found: the insert is on the path
// where the read found its row, so it does not create a row the read found absent, and
// one call makes the second invitation as surely as two racing calls do. That is no
// check-then-insert race.
func (s *Service) Reinvite(teamID int64, email string) error {
	if old := s.findInvite(teamID, email); old != nil {
		return s.db.Create(&models.Invite{TeamID: teamID, Email: email}).Error
	}
	return nil
}

// ClaimLocker gives the holder the locker whose number the caller names. The number is
// the primary key, but the read looks up the holder, which nothing makes unique: two
// requests of one holder for two numbers both insert.
func ClaimLocker(db *gorm.DB, holder string, number int64) error {
	var l models.Locker
	if err := db.Where("holder = ?", holder).First(&l).Error; err == nil {
		return errors.New("holder has a locker")
	}
	return db.Create(&models.Locker{Number: number, Holder: holder}).Error // want `insert into lockers is decided by a read of lockers with no lock, no conflict clause and no unique constraint on \(holder\)`
}

// ClaimAnyLocker inserts the locker it is given without setting its number: gorm
// numbers a zero integer key, so two calls insert two lockers.
func ClaimAnyLocker(db *gorm.DB, l *models.Locker) error {
	var found models.Locker
	if err := db.Where("holder = ?", l.Holder).First(&found).Error; err == nil {
		return errors.New("holder has a locker")
	}
	return db.Create(l).Error // want `insert into lockers is decided by a read of lockers`
}

// guestByEmail reads into a pointer, and gives nil when there is none.
func (s *Service) guestByEmail(ctx context.Context, email string) (*models.Guest, error) {
	var g *models.Guest
	if err := s.db.WithContext(ctx).Where("email = ?", email).First(&g).Error; err != nil {
		return nil, err
	}
	return g, nil
}

// AddGuest refuses an email another guest holds, then creates the one it is given, the
// read one call down: the same race, since a guest given with no id gets a new one drawn
// here, and the primary key refuses nothing.
func (s *Service) AddGuest(ctx context.Context, g *models.Guest) (*models.Guest, error) {
	if g.ID == "" {
		g.ID = strconv.Itoa(rand.Int())
	}
	if g.Email != "" {
		if found, _ := s.guestByEmail(ctx, g.Email); found != nil && found.ID != g.ID {
			return g, ErrTaken
		}
	}
	return g, s.db.WithContext(ctx).Create(&g).Error // want `insert into guests is decided by a read of guests`
}
