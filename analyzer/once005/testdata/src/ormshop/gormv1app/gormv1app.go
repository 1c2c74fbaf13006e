// Package gormv1app saves named things through gorm v1.
package gormv1app

import (
	"errors"

	"github.com/jinzhu/gorm"
)

var ErrTaken = errors.New("name in use")

// Group is saved to groups; nothing makes (user_id, name) unique.
type Group struct {
	ID     int64
	UserID int64
	Name   string
}

// Label is saved to labels, whose name is unique by its tag.
type Label struct {
	ID   int64
	Name string `gorm:"unique_index"`
}

type Service struct{ db *gorm.DB }

// PostGroup looks the name up, then creates the group: two saves both find none.
func (s *Service) PostGroup(userID int64, name string) error {
	var g Group
	err := s.db.Where("user_id = ? AND name = ?", userID, name).First(&g).Error
	if err == nil {
		return ErrTaken
	}
	if !gorm.IsRecordNotFoundError(err) {
		return err
	}
	return s.db.Create(&Group{UserID: userID, Name: name}).Error // want `insert into groups is decided by a read of groups with no lock, no conflict clause and no unique constraint on \(user_id, name\)`
}

// PostLabel does the same on a table whose unique index makes the second insert fail.
func (s *Service) PostLabel(name string) error {
	var l Label
	if err := s.db.Where("name = ?", name).First(&l).Error; err == nil {
		return ErrTaken
	}
	return s.db.Create(&Label{Name: name}).Error
}
