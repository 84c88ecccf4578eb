// Package strictjson reads JSON objects at the gateway's anti-smuggling
// boundary: the JSON-RPC envelope, its params, a REST call's body and a
// meta tool's arguments. Two parsers that disagree on what an object says
// are a way past a check: encoding/json takes the last of two members
// with one name and matches names without regard to case, while a proxy
// or audit reader in front of the gateway may take the first, or the
// exact spelling. Scan refuses both ambiguities, so every reader sees the
// same members.
package strictjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// ProblemKind says what made an object ambiguous or unexpected.
type ProblemKind int

const (
	// Duplicate: a member name appears twice.
	Duplicate ProblemKind = iota + 1
	// Misspelled: a member equals an expected name under case folding
	// but is not spelled as it ("Arguments" for "arguments").
	Misspelled
	// Unknown: a member the caller did not name, in a closed object.
	Unknown
)

// Problem is the first thing Scan found wrong with an object.
type Problem struct {
	Kind ProblemKind
	Key  []byte // the member's name, decoded
	Want string // for Misspelled, the expected spelling
}

// Scan reads the members of obj, a valid JSON object (json.Valid has run
// and obj starts at '{'), once and without allocating on the good path.
// vals[i], when vals is not nil, receives the raw value of names[i] (its
// first occurrence), or stays nil when absent. A member that appears
// twice, a member that spells one of names in other case, and, when
// closed, any other member, is a problem. Scan records the first problem
// and reads on, so the caller can still use what it read (a JSON-RPC id
// to echo); dup has bit i set when names[i] appeared more than once
// (names beyond the 64th are not reported there).
func Scan(obj []byte, names []string, closed bool, vals [][]byte) (p *Problem, dup uint64) {
	var seen keySet
	first := func(kind ProblemKind, key []byte, want string) {
		if p == nil {
			p = &Problem{Kind: kind, Key: bytes.Clone(key), Want: want}
		}
	}
	for it := newIter(obj); ; {
		rawKey, val, ok := it.next()
		if !ok {
			return p, dup
		}
		key := Unquote(rawKey)
		i := index(names, key)
		if seen.add(key) {
			if 0 <= i && i < 64 {
				dup |= 1 << i
			}
			first(Duplicate, key, "")
			continue
		}
		switch {
		case i >= 0:
			if vals != nil {
				vals[i] = val
			}
		case foldIndex(names, key) >= 0:
			first(Misspelled, key, names[foldIndex(names, key)])
		case closed:
			first(Unknown, key, "")
		}
	}
}

// FirstDuplicate returns the first member name of obj (a valid JSON
// object) that appears twice at its top level, decoded, or nil.
func FirstDuplicate(obj []byte) []byte {
	if p, _ := Scan(obj, nil, false, nil); p != nil {
		return p.Key
	}
	return nil
}

func index(names []string, key []byte) int {
	for i, n := range names {
		if n == string(key) {
			return i
		}
	}
	return -1
}

func foldIndex(names []string, key []byte) int {
	for i, n := range names {
		if len(n) == len(key) && bytes.EqualFold(key, []byte(n)) {
			return i
		}
	}
	return -1
}

// Unquote decodes a JSON string token (quotes included); other tokens are
// returned as they are. raw must be valid JSON. The fast path returns a
// sub-slice of raw; escapes and invalid UTF-8 (which becomes U+FFFD) go
// through encoding/json, so both read a string the same way.
func Unquote(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return raw
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return inner
	}
	return []byte(s)
}

// keySet detects duplicate member names. The first few names live in an
// array; a map takes over beyond, so an object with many thousand
// members costs linear time, not quadratic.
type keySet struct {
	small [16][]byte
	n     int
	big   map[string]struct{}
}

// add records key and reports whether it was already there.
func (s *keySet) add(key []byte) (dup bool) {
	if s.big != nil {
		if _, ok := s.big[string(key)]; ok {
			return true
		}
		s.big[string(key)] = struct{}{}
		return false
	}
	for _, k := range s.small[:s.n] {
		if bytes.Equal(k, key) {
			return true
		}
	}
	if s.n < len(s.small) {
		s.small[s.n] = key
		s.n++
		return false
	}
	s.big = make(map[string]struct{}, 2*len(s.small))
	for _, k := range s.small {
		s.big[string(k)] = struct{}{}
	}
	s.big[string(key)] = struct{}{}
	return false
}

// The walk below assumes valid JSON: it only finds where values end.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); {
		switch b[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default: // number, true, false, null
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
}

// iter walks the members of a valid JSON object without allocating.
type iter struct {
	b []byte
	i int
}

func newIter(obj []byte) iter { return iter{b: obj, i: skipSpace(obj, 1)} }

// next returns the next member's raw key (quotes included) and raw value.
func (it *iter) next() (key, val []byte, ok bool) {
	b, i := it.b, it.i
	if i >= len(b) || b[i] == '}' {
		return nil, nil, false
	}
	if b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	ks := i
	i = skipString(b, i)
	key = b[ks:i]
	i = skipSpace(b, i)
	i = skipSpace(b, i+1) // ':'
	vs := i
	i = skipValue(b, i)
	val = b[vs:i]
	it.i = skipSpace(b, i)
	return key, val, true
}
