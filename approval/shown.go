package approval

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// What a human is shown of a call must be what runs. Two kinds of text
// defeat that on a screen without changing a byte of the call: format
// characters that are never drawn but act (bidi overrides and isolates,
// U+202A–202E, U+2066–2069, U+200E/F, U+061C, render "DE89‮0001" reversed;
// zero-width U+200B–200D, U+2060, U+FEFF hide inside words), and long runs
// of spaces that push the rest of a value ("; ALSO: drop production
// database") out of the window. [Shown] makes both visible; [EscapeHidden]
// keeps JSON exact for machines and escapes the first kind.

// MinSpaceRun is the shortest run of spaces [Shown] replaces with a count.
const MinSpaceRun = 4

// hidden reports whether r is drawn as nothing (or as space) while it
// changes how the text around it reads: every format character (Cf, which
// holds the bidi controls, the zero-width characters and the BOM) and the
// fillers fonts draw blank.
func hidden(r rune) bool {
	switch r {
	case '\u034f', '\u115f', '\u1160', '\u3164', '\uffa0', '\u180e':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// space reports whether r is drawn as blank space (any Unicode space
// separator; JSON escapes tabs and newlines inside strings).
func space(r rune) bool { return unicode.Is(unicode.Zs, r) }

// Shown returns the JSON text js for a human to read: inside string
// values, each hidden character becomes a visible marker such as
// ⟨U+202E⟩, and each run of [MinSpaceRun] or more spaces becomes ␠×N
// (N the run's length). Outside strings (indentation) nothing changes.
// The result is for display only; the call is js.
func Shown(js []byte) string { return shown(js, true) }

// ShownText is [Shown] for a plain string (a subject, a workspace): its
// hidden characters become markers and its long runs of spaces counts.
func ShownText(s string) string { return shown([]byte(s), false) }

// shown writes text with its hidden characters and long runs of spaces
// made visible: inside JSON strings when isJSON, else everywhere.
func shown(text []byte, isJSON bool) string {
	var b strings.Builder
	b.Grow(len(text))
	in, esc := !isJSON, false
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		switch {
		case !in:
			in = r == '"'
		case isJSON && esc:
			esc = false
		case isJSON && r == '\\':
			esc = true
		case isJSON && r == '"':
			in = false
		case hidden(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			i += n
			continue
		case space(r):
			run, j := 0, i
			for j < len(text) {
				s, m := utf8.DecodeRune(text[j:])
				if !space(s) {
					break
				}
				run, j = run+1, j+m
			}
			if run >= MinSpaceRun {
				b.WriteString("␠×" + strconv.Itoa(run))
				i = j
				continue
			}
		}
		b.Write(text[i : i+n])
		i += n
	}
	return b.String()
}

// EscapeHidden returns the JSON text js with every hidden character
// inside its strings written as a \u escape: the same JSON value, whose
// text a terminal or a log viewer shows as it is.
func EscapeHidden(js []byte) []byte {
	var out []byte
	in, esc := false, false
	for i := 0; i < len(js); {
		r, n := utf8.DecodeRune(js[i:])
		switch {
		case !in:
			in = r == '"'
		case esc:
			esc = false
		case r == '\\':
			esc = true
		case r == '"':
			in = false
		case hidden(r):
			if out == nil {
				out = append(make([]byte, 0, len(js)+16), js[:i]...)
			}
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
			i += n
			continue
		}
		if out != nil {
			out = append(out, js[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return js
	}
	return out
}
