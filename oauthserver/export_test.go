package oauthserver

import "time"

// Len counts the live entries of an in-memory store, so a test can see
// that a refused request left nothing behind.
func (s *FileStore) Len() int {
	n := 0
	s.update(func(d map[string]fileEntry, now int64) bool {
		for _, e := range d {
			if e.E > now {
				n++
			}
		}
		return false
	})
	return n
}

// SetNow replaces the store's clock.
func (s *FileStore) SetNow(now func() time.Time) { s.now = now }
