package mcp

import (
	"encoding/base64"
	"errors"
	"strings"
)

// Protocol revisions this server speaks.
const (
	// ModernVersion is the one revision of the modern (stateless, no
	// initialize) era this server serves.
	ModernVersion = "2026-07-28"
	// LatestLegacyVersion is offered to an initialize whose requested
	// revision is not supported.
	LatestLegacyVersion = "2025-11-25"
	// DefaultLegacyVersion is assumed for a legacy request that carries no
	// MCP-Protocol-Version header (2025-03-26 clients never send it; L-HTTP
	// §Protocol Version Header).
	DefaultLegacyVersion = "2025-03-26"
)

// supportedVersions lists the revisions server/discover advertises and
// -32022 errors name, newest first. An array, so no caller can change it.
var supportedVersions = [...]string{ModernVersion, "2025-11-25", "2025-06-18", "2025-03-26"}

// legacyVersion reports whether v is a legacy revision this server accepts:
// the three in supportedVersions plus 2024-11-05, which initialize may
// negotiate (so a client that negotiated it must not be refused later).
func legacyVersion(v string) bool {
	switch v {
	case "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
		return true
	}
	return false
}

// modernOrLater reports whether v looks like a revision date on or after the
// modern era's first revision. Such a header on a request without the _meta
// version is a malformed modern request, not a legacy one (project decision,
// mcp-spec-notes §1.3).
func modernOrLater(v string) bool {
	if len(v) != len("2006-01-02") || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return v >= ModernVersion
}

// Headers are the HTTP request headers the dispatcher checks against the
// body. Values are as received; "" means absent.
type Headers struct {
	ProtocolVersion string // MCP-Protocol-Version
	Method          string // Mcp-Method
	Name            string // Mcp-Name, possibly in =?base64?…?= form
}

const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

var errBadHeaderValue = errors.New("invalid header value")

// decodeHeaderValue undoes the =?base64?…?= form that clients use for values
// a header cannot carry as they are (HTTP §Standard Request Headers).
func decodeHeaderValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, base64Prefix)
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, base64Suffix)
	if !ok {
		return "", errBadHeaderValue
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", errBadHeaderValue
	}
	return string(b), nil
}
