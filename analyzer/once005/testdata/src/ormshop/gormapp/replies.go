package gormapp

import "gorm.io/gorm"

// Reply embeds gorm.Model: its id is the primary key the database numbers.
type Reply struct {
	gorm.Model
	ParentID uint
	Body     string
	Locked   bool
}

// AddReply reads the parent by its id and refuses a locked one, then inserts the reply:
// the read finds another row, by a key no new reply can have, so what it finds decides
// nothing about a duplicate.
func AddReply(db *gorm.DB, parentID uint, body string) error {
	if parent := findReply(db, parentID); parent.Locked {
		return ErrTaken
	}
	return db.Create(&Reply{ParentID: parentID, Body: body}).Error
}

func findReply(db *gorm.DB, id uint) Reply {
	var r Reply
	db.Where("id = ?", id).First(&r)
	return r
}

// AddReplyUnder is AddReply with the parent read by the id given inline, as First(&r, id)
// takes it: a bare value among gorm's inline conditions is the primary key.
func AddReplyUnder(db *gorm.DB, parentID uint, body string) error {
	if parent := findReplyInline(db, parentID); parent.Locked {
		return ErrTaken
	}
	return db.Create(&Reply{ParentID: parentID, Body: body}).Error
}

func findReplyInline(db *gorm.DB, id uint) Reply {
	var r Reply
	db.First(&r, id)
	return r
}

// AddFirstReply inserts a reply only when the parent has none: two calls both find none.
func AddFirstReply(db *gorm.DB, parentID uint, body string) error {
	var first Reply
	if err := db.Where("parent_id = ?", parentID).First(&first).Error; err == nil {
		return ErrTaken
	}
	return db.Create(&Reply{ParentID: parentID, Body: body}).Error // want `insert into replies is decided by a read of replies .*the check \(Clauses\(clause.OnConflict`
}
