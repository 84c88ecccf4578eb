// Package text bounds strings the gateway echoes: a caller's value quoted
// in an error, a document's title in a comment, a request value in a log.
// One rule everywhere: the result is valid UTF-8, cut on a character
// boundary, and says it was cut.
package text

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks a cut.
const Ellipsis = "…"

// Clip returns s when it has at most n bytes; otherwise its longest prefix
// of at most n bytes that ends on a character boundary, without trailing
// space, followed by Ellipsis. Invalid UTF-8 in s becomes U+FFFD first, so
// the result is always valid UTF-8.
func Clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRight(s[:n], " \t\r\n") + Ellipsis
}
