// Package gateway holds what the module ships beside its packages.
package gateway

import _ "embed"

// DefaultCatalog is the bundled catalog that `gateway demo` serves: the
// BackWave tool surface over the demo job system (see package demo).
//
//go:embed catalog.yaml
var DefaultCatalog []byte
