package xormapp

import (
	"gorm.io/gorm"
	"xorm.io/xorm"
)

// Grant is written by two ORMs, as a code base moving from xorm to gorm does: gorm names
// its table grants, xorm grant, and each ORM's tag makes (user_id, repo_id) unique.
type Grant struct {
	ID     int64 `gorm:"primaryKey"`
	UserID int64 `xorm:"UNIQUE(s)" gorm:"uniqueIndex:grant_user_repo;not null"`
	RepoID int64 `xorm:"UNIQUE(s)" gorm:"uniqueIndex:grant_user_repo;not null"`
	Mode   int
}

// CountGrants reads the grants through gorm.
func CountGrants(db *gorm.DB, repoID int64) (int64, error) {
	var n int64
	err := db.Model(&Grant{}).Where("repo_id = ?", repoID).Count(&n).Error
	return n, err
}

// GrantAccess looks for the grant through xorm, then inserts it: the unique index makes a
// second concurrent insert fail, whichever ORM's name the table goes by.
func GrantAccess(s *xorm.Session, userID, repoID int64, mode int) error {
	g := &Grant{UserID: userID, RepoID: repoID}
	has, err := s.Get(g)
	if err != nil || has {
		return err
	}
	g.Mode = mode
	_, err = s.Insert(g)
	return err
}
