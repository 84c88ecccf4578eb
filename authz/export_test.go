package authz

// KeyLookups reports how many times v handed a key to signature
// verification: a cached verification does not count.
func KeyLookups(v Verifier) int64 { return v.(*jwtVerifier).keyLookups.Load() }

// CachedTokens reports how many verified tokens v's cache holds.
func CachedTokens(v Verifier) int { return v.(*jwtVerifier).cache.len() }

// CachedProbes reports how many probe answers ps holds.
func CachedProbes(ps *Prerequisites) int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.cache)
}
