package rendering_test

// An independent judge of fenced text renderings, written from the
// contract (../shared/design/catalog.md, "What a call returns", and
// docs/security.md, "Fences and their limits"), not from fence.go: it
// shares no code with package rendering, so a regression there cannot
// blind the tests that judge it. Its look-alike classes come
// from Unicode tables (format characters, dash punctuation, width
// variants) rather than from the lists the gateway keeps.
//
// The contract it checks:
//   - the text is one JSON object;
//   - every string value at an untrusted path is exactly
//     <untrusted-document-text-NONCE ref="PATH">…</untrusted-document-text-NONCE>
//     with NONCE 32 lowercase hex characters, the same for the whole text;
//   - nothing else anywhere (keys, other values, fenced content) is shaped
//     like a fence tag: in any case, after dropping invisible characters
//     and folding full-width forms, hyphen, space and '<' look-alikes;
//   - scanning the whole text with its JSON escapes decoded finds exactly
//     the real tags, opening and closing in turn, one pair per fenced value.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/width"
)

const fenceName = "untrusted-document-text"

var nonceShape = regexp.MustCompile(`^[0-9a-f]{32}$`)

type runeClass int

const (
	rcInvisible runeClass = iota // dropped before comparing
	rcLess                       // opens a tag
	rcSlash                      // marks a closing tag
	rcSep                        // space, underscore or any dash: reads as '-'
	rcLetter                     // anything else, compared lower-cased
)

// classify folds r as a reader would see it in a tag name.
func classify(r rune) (runeClass, rune) {
	if r == '\t' || r == '\n' || r == '\r' || r == '\u034F' || unicode.Is(unicode.Cf, r) {
		return rcInvisible, 0
	}
	if n := width.LookupRune(r).Narrow(); n != 0 {
		r = n // full-width forms read as their ASCII letters
	}
	switch {
	case r == '<' || r == '\uFE64': // small form variant
		return rcLess, '<'
	case r == '/' || r == '\u2215' || r == '\u29F8': // division slash, big solidus
		return rcSlash, '/'
	case r == '_' || r == '\u2212' || unicode.Is(unicode.Pd, r) || unicode.Is(unicode.Zs, r):
		return rcSep, '-'
	}
	return rcLetter, unicode.ToLower(r)
}

// fenceTag is one fence-shaped tag found in a string.
type fenceTag struct {
	at      int  // byte offset of its '<' look-alike
	closing bool // a '/' came before the name
}

// findFenceTags returns every fence-shaped tag in s.
func findFenceTags(s string) []fenceTag {
	var tags []fenceTag
	for i, r := range s {
		if c, _ := classify(r); c != rcLess {
			continue
		}
		if closing, ok := tagNameAfter(s[i+utf8.RuneLen(r):]); ok {
			tags = append(tags, fenceTag{at: i, closing: closing})
		}
	}
	return tags
}

// tagNameAfter reports whether s (what follows a '<') spells the fence
// name: separators and one slash may come first; invisible characters are
// ignored everywhere.
func tagNameAfter(s string) (closing, ok bool) {
	want := []rune(fenceName)
	w := 0
	for _, r := range s {
		c, f := classify(r)
		if c == rcInvisible {
			continue
		}
		if w == 0 {
			if c == rcSep {
				continue
			}
			if c == rcSlash && !closing {
				closing = true
				continue
			}
		}
		switch {
		case want[w] == '-' && c == rcSep, c == rcLetter && f == want[w]:
			w++
		default:
			return closing, false
		}
		if w == len(want) {
			return closing, true
		}
	}
	return closing, false
}

// jsonString is one key or string value of the text, with its path.
type jsonString struct {
	path  []string
	key   bool
	value string
}

// jsonStrings walks text with encoding/json's tokenizer (so keys keep their
// order and duplicates) and returns its keys and string values.
func jsonStrings(text []byte) ([]jsonString, error) {
	dec := json.NewDecoder(strings.NewReader(string(text)))
	dec.UseNumber()
	var out []jsonString
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("the text is not a JSON object")
	}
	var walk func(path []string, open json.Delim) error
	walk = func(path []string, open json.Delim) error {
		for i := 0; ; i++ {
			seg := strconv.Itoa(i)
			if open == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if k == json.Delim('}') {
					return nil
				}
				seg = k.(string)
				out = append(out, jsonString{path: path, key: true, value: seg})
			}
			v, err := dec.Token()
			if err != nil {
				return err
			}
			p := append(path[:len(path):len(path)], seg)
			switch v := v.(type) {
			case json.Delim:
				if v == ']' || v == '}' {
					return nil
				}
				if err := walk(p, v); err != nil {
					return err
				}
			case string:
				out = append(out, jsonString{path: p, value: v})
			}
		}
	}
	if err := walk(nil, '{'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the object")
	}
	return out, nil
}

// pathMatches: pattern "a.#.b" matches path a,7,b.
func pathMatches(pattern string, path []string) bool {
	segs := strings.Split(pattern, ".")
	if len(segs) != len(path) {
		return false
	}
	for i, s := range segs {
		if s == "#" {
			if _, err := strconv.ParseUint(path[i], 10, 64); err == nil {
				continue
			}
		}
		if s != path[i] {
			return false
		}
	}
	return true
}

// decodeJSONEscapes returns text with the escapes inside its strings
// decoded (\u003c becomes '<'), so a tag spelled with escapes is seen.
func decodeJSONEscapes(text []byte) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '"':
			in = !in
		case in && c == '\\' && i+1 < len(text):
			i++
			switch e := text[i]; e {
			case 'u':
				if i+4 < len(text) {
					n, err := strconv.ParseUint(string(text[i+1:i+5]), 16, 32)
					if err == nil {
						r := rune(n)
						i += 4
						if utf16.IsSurrogate(r) && i+6 < len(text) && text[i+1] == '\\' && text[i+2] == 'u' {
							if lo, err := strconv.ParseUint(string(text[i+3:i+7]), 16, 32); err == nil {
								r = utf16.DecodeRune(r, rune(lo))
								i += 6
							}
						}
						b.WriteRune(r)
						continue
					}
				}
				b.WriteByte('u')
			case 'n', 'r', 't':
				b.WriteByte(map[byte]byte{'n': '\n', 'r': '\r', 't': '\t'}[e])
			default:
				b.WriteByte(e)
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// checkFenced judges a text rendering against the fence contract.
func checkFenced(text []byte, nonce string, untrusted []string) error {
	if !nonceShape.MatchString(nonce) {
		return fmt.Errorf("nonce %q is not 32 lowercase hex characters", nonce)
	}
	if !json.Valid(text) {
		return errors.New("the text is not valid JSON")
	}
	strs, err := jsonStrings(text)
	if err != nil {
		return err
	}
	open := "<" + fenceName + "-" + nonce + ` ref="`
	closeTag := "</" + fenceName + "-" + nonce + ">"
	fenced := 0
	for _, s := range strs {
		ref := strings.Join(s.path, ".")
		isUntrusted := false
		// A value is untrusted when its path, or the path of an object or
		// array holding it, is listed.
		for _, u := range untrusted {
			for k := 1; k <= len(s.path); k++ {
				isUntrusted = isUntrusted || (!s.key && pathMatches(u, s.path[:k]))
			}
		}
		inner := s.value
		if isUntrusted {
			head := open + strings.ReplaceAll(ref, `"`, "&quot;") + `">`
			if !strings.HasPrefix(inner, head) || !strings.HasSuffix(inner[len(head):], closeTag) {
				return fmt.Errorf("%s: untrusted value is not fenced with nonce %s: %.120q", ref, nonce, inner)
			}
			inner = inner[len(head) : len(inner)-len(closeTag)]
			fenced++
		}
		if tags := findFenceTags(inner); len(tags) > 0 {
			what := "value"
			if s.key {
				what = "key"
			}
			return fmt.Errorf("%s: %s holds a fence-shaped tag at byte %d: %.120q", ref, what, tags[0].at, inner)
		}
	}
	// The whole text, escapes decoded: only the real tags, in pairs.
	raw := decodeJSONEscapes(text)
	tags := findFenceTags(raw)
	if len(tags) != 2*fenced {
		return fmt.Errorf("%d fence-shaped tags in the text, want %d (an opening and a closing tag for each of %d fenced values)", len(tags), 2*fenced, fenced)
	}
	for i, tg := range tags {
		want := open
		if i%2 == 1 {
			want = closeTag
		}
		if tg.closing != (i%2 == 1) || !strings.HasPrefix(raw[tg.at:], want) {
			return fmt.Errorf("tag %d at byte %d is not the real %s tag %q: %.80q", i, tg.at, map[bool]string{false: "opening", true: "closing"}[i%2 == 1], want, raw[tg.at:])
		}
	}
	return nil
}
