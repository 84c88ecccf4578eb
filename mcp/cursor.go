package mcp

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// ListPageSize is how many tools one tools/list page carries at most.
const ListPageSize = 500

// ListPageBytes bounds the tool objects of one tools/list page: a page
// ends before the tool that would take it past this (a page always holds
// at least one tool). Imported tools with large schemas made 500-tool
// pages of 1.8 MB.
const ListPageBytes = 256 << 10

// A tools/list cursor is opaque to clients. Inside it is base64url (no
// padding) of "v1.<catalog>.<offset>": a format tag, the first 8 hex digits
// of the catalog's SHA-256 and the offset of the page's first tool. A server
// is stateless, so the position travels in the cursor; the catalog tag makes
// a cursor from before a reload (or from another node with another catalog)
// an invalid cursor (-32602) rather than a silently shifted page. It is not
// signed: forging an offset only skips tools the caller may list anyway.

const (
	cursorTag    = "v1"
	maxCursorLen = 64
)

var errBadCursor = errors.New("invalid cursor")

// catalogTag is the part of the catalog hash a cursor carries.
func catalogTag(hash string) string {
	if len(hash) > 8 {
		return hash[:8]
	}
	return hash
}

// encodeCursor returns the cursor for the page starting at offset.
func encodeCursor(hash string, offset int) string {
	raw := cursorTag + "." + catalogTag(hash) + "." + strconv.Itoa(offset)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeCursor returns the offset in cursor, which must have been issued
// for the catalog with this hash.
func decodeCursor(hash, cursor string) (int, error) {
	if cursor == "" || len(cursor) > maxCursorLen {
		return 0, errBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, errBadCursor
	}
	tag, rest, ok := strings.Cut(string(raw), ".")
	if !ok || tag != cursorTag {
		return 0, errBadCursor
	}
	cat, off, ok := strings.Cut(rest, ".")
	if !ok || cat != catalogTag(hash) {
		return 0, errBadCursor
	}
	// Only the decimal form encodeCursor writes: no sign, no leading zero.
	if off == "" || off[0] == '0' || len(off) > 9 {
		return 0, errBadCursor
	}
	for i := 0; i < len(off); i++ {
		if off[i] < '0' || off[i] > '9' {
			return 0, errBadCursor
		}
	}
	n, err := strconv.Atoi(off)
	if err != nil {
		return 0, errBadCursor
	}
	return n, nil
}
