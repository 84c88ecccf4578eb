package oauthserver

// Len counts the live entries of an in-memory store, so a test can see
// that a refused request left nothing behind.
func (s *FileStore) Len() int {
	n := 0
	s.update(func(d map[string]fileEntry) bool { n = len(d); return false })
	return n
}
