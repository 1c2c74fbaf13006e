// Package cache is a stand-in for github.com/patrickmn/go-cache: an in-memory store whose
// entries expire.
package cache

import (
	"errors"
	"sync"
	"time"
)

// Cache holds items until they expire.
type Cache struct {
	mu    sync.Mutex
	items map[string]any
}

// New returns a cache whose items expire after def.
func New(def, cleanup time.Duration) *Cache { return &Cache{items: map[string]any{}} }

// Get returns the item under k and whether it was found.
func (c *Cache) Get(k string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.items[k]
	return v, ok
}

// Set stores v under k.
func (c *Cache) Set(k string, v any, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[k] = v
}

// SetDefault stores v under k with the default expiry.
func (c *Cache) SetDefault(k string, v any) { c.Set(k, v, 0) }

// Add stores v under k only if k is absent, and fails otherwise.
func (c *Cache) Add(k string, v any, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return errors.New("exists")
	}
	c.items[k] = v
	return nil
}

// Delete removes k.
func (c *Cache) Delete(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items, k)
}
