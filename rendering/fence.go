package rendering

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FenceTag is the name of the tag that fences untrusted document text.
const FenceTag = "untrusted-document-text"

// NewNonce returns 32 lowercase hex characters (128 bits) from crypto/rand.
func NewNonce() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// OpenFence and CloseFence are the tags around one untrusted value. The
// ref may hold an upstream's keys, so a fence-shaped tag in it is
// neutralized and a quote cannot end it.
func OpenFence(nonce, ref string) string {
	return "<" + FenceTag + "-" + nonce + ` ref="` + strings.ReplaceAll(Neutralize(ref), `"`, "&quot;") + `">`
}

func CloseFence(nonce string) string { return "</" + FenceTag + "-" + nonce + ">" }

// invisible reports characters an attacker can slip into a tag name that
// a reader (or a model) would not see: every Unicode format character
// (zero-width, bidi controls, soft hyphen, the tag characters of "ASCII
// smuggling", U+E0000–E007F), the combining grapheme joiner, and the line
// breaks and tab a tag may be wrapped across.
func invisible(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r == '\u034F' || unicode.Is(unicode.Cf, r)
}

// fold maps full-width forms to ASCII, every dash, the minus sign, '_'
// and every space to '-', and letters to lower case, so that look-alike
// tag names compare equal.
func fold(r rune) rune {
	if r >= '\uFF01' && r <= '\uFF5E' {
		r -= 0xFEE0
	}
	if r == '_' || r == '\u2212' || unicode.Is(unicode.Pd, r) || unicode.Is(unicode.Zs, r) {
		return '-'
	}
	return unicode.ToLower(r)
}

// isLess reports the characters that open a tag once folded.
func isLess(r rune) bool { return r == '<' || r == '\uFF1C' || r == '\uFE64' }

// tagAt reports whether s[i:] (which starts with a '<' look-alike) is
// shaped like a fence tag: an optional '/', then the tag name, ignoring
// invisible characters, whitespace, case and full-width forms.
func tagAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	j := i + size
	want := FenceTag
	matched, slashSeen := 0, false
	for j < len(s) && matched < len(want) {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if invisible(r) {
			continue
		}
		f := fold(r)
		if matched == 0 && !slashSeen && (f == '/' || r == '\u2215' || r == '\u29F8') {
			slashSeen = true
			continue
		}
		if matched == 0 && f == '-' { // "< untrusted" folds its space to '-'
			continue
		}
		if byte(f) != want[matched] || f > utf8.RuneSelf {
			return false
		}
		matched++
	}
	return matched == len(want)
}

// Neutralize rewrites every fence-shaped tag in s so it cannot open or
// close a fence: its '<' (or look-alike) becomes "&lt;". Everything else
// is kept byte for byte.
func Neutralize(s string) string {
	if !mayHoldTag(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isLess(r) && tagAt(s, i) {
			b.WriteString(s[last:i])
			b.WriteString("&lt;")
			last = i + size
		}
		i += size
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// HasFenceTag reports whether s holds anything shaped like a fence tag.
func HasFenceTag(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if isLess(r) && tagAt(s, i) {
			return true
		}
		i += size
	}
	return false
}

// mayHoldTag is the fast check: text without any '<' look-alike (or, in raw
// JSON, a \u escape that could spell one) cannot hold a tag.
func mayHoldTag(s string) bool {
	return strings.IndexByte(s, '<') >= 0 || strings.Contains(s, `\u`) ||
		strings.Contains(s, "\uFF1C") || strings.Contains(s, "\uFE64")
}

// mayHoldTagBytes is mayHoldTag for raw bytes.
func mayHoldTagBytes(b []byte) bool {
	return bytes.IndexByte(b, '<') >= 0 || bytes.Contains(b, []byte(`\u`)) ||
		bytes.Contains(b, []byte("\uFF1C")) || bytes.Contains(b, []byte("\uFE64"))
}
