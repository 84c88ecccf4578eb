//go:build race

package openapi

// The race detector drops sync.Pool's items, so regexp allocates a new
// machine for every match: allocation counts under it say nothing of the
// code's own.
func init() { raceEnabled = true }
