package proxy

import (
	"errors"
	"fmt"
)

// ErrUnknownToolset: the catalog declares no toolset of that name.
// Surfaces answer 404 (HTTP) or refuse to start (stdio).
var ErrUnknownToolset = errors.New("unknown toolset")

// UnknownToolsetError names the toolset that does not exist.
type UnknownToolsetError struct{ Name string }

func (e *UnknownToolsetError) Error() string { return fmt.Sprintf("unknown toolset %q", e.Name) }
func (e *UnknownToolsetError) Unwrap() error { return ErrUnknownToolset }

// HasToolset reports whether the catalog declares the toolset name; ""
// (the whole catalog) always exists.
func (c *Core) HasToolset(name string) bool {
	_, err := c.toolset(name)
	return err == nil
}

// toolset returns the members of the set name, nil for "" (every tool).
func (c *Core) toolset(name string) (map[*tool]bool, error) {
	if name == "" {
		return nil, nil
	}
	m, ok := c.toolsets[name]
	if !ok {
		return nil, &UnknownToolsetError{Name: name}
	}
	return m, nil
}
