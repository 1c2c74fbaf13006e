// Package dedupe is a process-local set with a verdict method.
package dedupe

import "sync"

// Set remembers keys for the life of the process.
type Set struct {
	mu   sync.Mutex
	seen map[string]bool
}

// Seen reports whether key was seen before, and remembers it.
func (s *Set) Seen(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[key] {
		return true
	}
	s.seen[key] = true
	return false
}
