// Package msgcache remembers, for a while, which chat messages were handled, and keeps
// the translations made of them.
package msgcache

import (
	"time"

	"github.com/patrickmn/go-cache"
)

// Store is what handlers see of the message cache.
type Store interface {
	IfProcessed(msgID string) bool
	TagProcessed(msgID string)
}

// Service keeps message IDs in a go-cache.
type Service struct {
	cache *cache.Cache
}

var svc *Service

// IfProcessed answers whether msgID was handled: it only reads.
func (s Service) IfProcessed(msgID string) bool {
	_, found := s.cache.Get(msgID)
	return found
}

// TagProcessed remembers msgID: it only writes.
func (s Service) TagProcessed(msgID string) {
	s.cache.Set(msgID, true, 30*time.Minute)
}

// Get returns the process's one message cache.
func Get() Store {
	if svc == nil {
		svc = &Service{cache: cache.New(30*time.Minute, 30*time.Minute)}
	}
	return svc
}

// Translations keeps the text made of each message: a cache of values.
type Translations struct {
	cache *cache.Cache
}

// NewTranslations returns an empty cache.
func NewTranslations() *Translations {
	return &Translations{cache: cache.New(time.Hour, time.Hour)}
}

// Has answers whether a translation of msgID is kept.
func (t *Translations) Has(msgID string) bool {
	_, found := t.cache.Get(msgID)
	return found
}

// Save keeps text as the translation of msgID.
func (t *Translations) Save(msgID, text string) {
	t.cache.Set(msgID, text, time.Hour)
}
