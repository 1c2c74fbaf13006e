// Package dedupe holds the in-memory sets a service uses to drop repeats: a set that
// answers "seen before?" and records the key in one call, and a limiter that lets a key
// through once a window.
package dedupe

import (
	"sync"
	"time"
)

// Set remembers keys.
type Set struct {
	mu   sync.Mutex
	seen map[string]bool
}

// New returns an empty set.
func New() *Set { return &Set{seen: map[string]bool{}} }

// Seen reports whether key was seen before, and records it.
func (s *Set) Seen(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[key] {
		return true
	}
	s.seen[key] = true
	return false
}

// Len counts the keys: it reads the set and decides nothing.
func (s *Set) Len() int { return len(s.seen) }

// Limiter lets a key through once per window.
type Limiter struct {
	mu     sync.Mutex
	window time.Duration
	last   map[string]time.Time
}

// NewLimiter returns a limiter letting each key through once per window.
func NewLimiter(window time.Duration) *Limiter {
	return &Limiter{window: window, last: map[string]time.Time{}}
}

// Allow reports whether key may go now, and records it when it may.
func (l *Limiter) Allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.last[key]; ok && time.Since(t) < l.window {
		return false
	}
	l.last[key] = time.Now()
	return true
}

// FirstTime reports whether key is new to m, and adds it.
func FirstTime(m *sync.Map, key string) bool {
	_, loaded := m.LoadOrStore(key, true)
	return !loaded
}

// Pool caches one value per account: what it returns is the value, not a verdict.
type Pool struct {
	mu sync.Mutex
	m  map[string]*Conn
}

// Conn is a pooled connection.
type Conn struct{ Account string }

// Get returns the account's connection, making it on first use.
func (p *Pool) Get(account string) *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[account]; ok {
		return c
	}
	c := &Conn{Account: account}
	p.m[account] = c
	return c
}
