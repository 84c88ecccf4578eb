package rendering

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Defaults for [Options] zero values.
const (
	DefaultStructuredBytes = 64 << 10
	DefaultTextBytes       = 80 << 10
	DefaultNoteField       = "historyNote"
)

// Options says how to render one shaped result.
type Options struct {
	// List is the top-level key whose trailing entries may be dropped to
	// fit the bounds. "" means nothing may be dropped.
	List string
	// Untrusted are paths ("jobs.#.note": '#' is every array index) whose
	// string values are fenced in the text.
	Untrusted []string
	// Sensitive are paths whose values are replaced by null, in both
	// renderings, when a render call withholds sensitive data.
	Sensitive []string
	// NoteField and Note are added at the top level when sensitive data is
	// withheld and Sensitive is not empty. NoteField "" means
	// DefaultNoteField.
	NoteField, Note string
	// StructuredBytes and TextBytes bound the two renderings; zero means
	// the defaults.
	StructuredBytes, TextBytes int
	// Nonce fences the text; "" draws a fresh one. Tests set it.
	Nonce string
}

// Output is a rendered result.
type Output struct {
	Structured []byte // compact JSON object
	Text       []byte // the same object, fenced, without HTML escaping
	Dropped    int    // list entries dropped to fit
	Nonce      string
}

// ErrTooLarge: the result does not fit its bounds even with its list
// emptied.
var ErrTooLarge = errors.New("output too large")

// TooLargeError says by how much.
type TooLargeError struct {
	Bytes int // the smallest rendering's size
	Limit int // the bound it broke
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("output too large: %d bytes over a %d byte bound", e.Bytes, e.Limit)
}
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

type pattern []string

func compile(paths []string) []pattern {
	var ps []pattern
	for _, p := range paths {
		if p != "" {
			ps = append(ps, strings.Split(p, "."))
		}
	}
	return ps
}

// Compiled holds options whose paths are split once, at load.
type Compiled struct {
	o         Options
	untrusted []pattern
	sensitive []pattern
}

// Compile prepares o for repeated use.
func Compile(o Options) *Compiled {
	if o.StructuredBytes <= 0 {
		o.StructuredBytes = DefaultStructuredBytes
	}
	if o.TextBytes <= 0 {
		o.TextBytes = DefaultTextBytes
	}
	if o.NoteField == "" {
		o.NoteField = DefaultNoteField
	}
	return &Compiled{o: o, untrusted: compile(o.Untrusted), sensitive: compile(o.Sensitive)}
}

// Render renders shaped, which must be a compact JSON object as [Shape]
// returns it (Render does not validate it again), with c's options.
// withhold nulls the Sensitive paths; nonce "" draws a fresh one.
func (c *Compiled) Render(shaped []byte, withhold bool, nonce string) (*Output, error) {
	withhold = withhold && len(c.sensitive) > 0
	// Fast path: nothing to fence, null or neutralize, and it fits. Most
	// small reads end here, with both renderings the shaped bytes.
	if len(c.untrusted) == 0 && !withhold && len(shaped) <= c.o.StructuredBytes && len(shaped) <= c.o.TextBytes &&
		!mayHoldTagBytes(shaped) && len(shaped) > 0 && shaped[0] == '{' {
		return &Output{Structured: shaped, Text: shaped}, nil
	}
	if nonce == "" {
		nonce = c.o.Nonce
	}
	for nonce == "" || bytes.Contains(shaped, []byte(nonce)) || bytes.Contains(shaped, []byte(strings.ToUpper(nonce))) {
		nonce = NewNonce() // redrawn if the content already holds it
	}
	r := &walker{c: c, nonce: nonce, withhold: withhold}
	root := gjson.ParseBytes(shaped)
	if !root.IsObject() {
		return nil, errors.New("rendering: shaped result is not an object")
	}
	var members []member
	var elems []piece
	listAt, total := -1, 0
	root.ForEach(func(k, v gjson.Result) bool {
		m := member{}
		m.key = r.key(k)
		path := []string{k.Str}
		if k.Str == c.o.List && v.IsArray() && listAt < 0 {
			listAt = len(members)
			i := 0
			stack := make([]string, 1, 8)
			stack[0] = k.Str
			// Entries are rendered only while they could still fit: once
			// the rendered ones alone pass a bound, no prefix holding them
			// all fits, and the rest are only counted. A huge list then
			// costs a scan, not a rendering.
			sumS, sumT := 0, 0
			under, _ := match(r.c.untrusted, stack) // the list itself is untrusted
			v.ForEach(func(_, e gjson.Result) bool {
				total++
				if sumS > c.o.StructuredBytes || sumT > c.o.TextBytes {
					return true
				}
				s, t := r.emit(make([]byte, 0, len(e.Raw)), make([]byte, 0, len(e.Raw)+32), e, append(stack, index(i)), under)
				elems = append(elems, piece{s, t})
				sumS, sumT = sumS+len(s)+1, sumT+len(t)+1
				i++
				return true
			})
		} else {
			m.val.s, m.val.t = r.emit(nil, nil, v, path, false)
		}
		members = append(members, m)
		return true
	})
	var extra piece
	if r.withhold {
		note := c.o.Note
		if note == "" {
			note = "sensitive detail withheld: the sensitive-data lock is closed"
		}
		kv := append(AppendString(nil, c.o.NoteField), ':')
		kv = AppendString(kv, note)
		extra = piece{kv, kv}
	}
	a := assembly{members: members, elems: elems, total: total, listAt: listAt, extra: extra, list: c.o.List}
	n := len(elems) // rendered entries; fits(n) fails when some were only counted
	fits := func(k int) bool {
		s, t := a.size(k)
		return s <= c.o.StructuredBytes && t <= c.o.TextBytes
	}
	k := n
	if !fits(n) {
		if listAt < 0 || !fits(0) {
			s, t := a.size(0)
			if s > c.o.StructuredBytes {
				return nil, &TooLargeError{Bytes: s, Limit: c.o.StructuredBytes}
			}
			return nil, &TooLargeError{Bytes: t, Limit: c.o.TextBytes}
		}
		lo, hi := 0, n-1 // fits(lo) holds, fits(n) does not
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if fits(mid) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		k = lo
	}
	s, t := a.build(k)
	return &Output{Structured: s, Text: t, Dropped: total - k, Nonce: nonce}, nil
}

// Degraded is a write's result when its answer cannot fit: the agent learns
// the upstream acted and must not retry blindly.
func Degraded(upstreamStatus int) []byte {
	b := []byte(`{"upstreamStatus":`)
	b = strconv.AppendInt(b, int64(upstreamStatus), 10)
	return append(b, `,"transportTruncated":{"list":null,"dropped":null,"reason":"the upstream's answer is larger than the output bounds; the write was performed"}}`...)
}

type piece struct{ s, t []byte }

type member struct {
	key piece // quoted key and colon
	val piece
}

// assembly puts members back together with the first k list entries.
type assembly struct {
	members []member
	elems   []piece // the rendered leading entries of the list
	total   int     // entries in the list, rendered or not
	listAt  int
	extra   piece
	list    string
}

func marker(list string, dropped int) []byte {
	b := append([]byte(`"transportTruncated":{"list":`), AppendString(nil, list)...)
	b = append(b, `,"dropped":`...)
	b = strconv.AppendInt(b, int64(dropped), 10)
	return append(b, '}')
}

func (a *assembly) size(k int) (s, t int) {
	s, t = 2, 2 // braces
	nm := 0
	for i, m := range a.members {
		if i > 0 {
			s, t = s+1, t+1
		}
		s, t = s+len(m.key.s), t+len(m.key.t)
		if i == a.listAt {
			s, t = s+2, t+2
			for _, e := range a.elems[:k] {
				s, t = s+len(e.s), t+len(e.t)
			}
			if k > 1 {
				s, t = s+k-1, t+k-1
			}
		} else {
			s, t = s+len(m.val.s), t+len(m.val.t)
		}
		nm++
	}
	if len(a.extra.s) > 0 {
		if nm > 0 {
			s, t = s+1, t+1
		}
		s, t = s+len(a.extra.s), t+len(a.extra.t)
		nm++
	}
	if k < a.total {
		mk := len(marker(a.list, a.total-k))
		if nm > 0 {
			mk++
		}
		s, t = s+mk, t+mk
	}
	return s, t
}

func (a *assembly) build(k int) (s, t []byte) {
	ss, tt := a.size(k)
	s, t = make([]byte, 0, ss), make([]byte, 0, tt)
	s, t = append(s, '{'), append(t, '{')
	nm := 0
	for i, m := range a.members {
		if i > 0 {
			s, t = append(s, ','), append(t, ',')
		}
		s, t = append(s, m.key.s...), append(t, m.key.t...)
		if i == a.listAt {
			s, t = append(s, '['), append(t, '[')
			for j, e := range a.elems[:k] {
				if j > 0 {
					s, t = append(s, ','), append(t, ',')
				}
				s, t = append(s, e.s...), append(t, e.t...)
			}
			s, t = append(s, ']'), append(t, ']')
		} else {
			s, t = append(s, m.val.s...), append(t, m.val.t...)
		}
		nm++
	}
	if len(a.extra.s) > 0 {
		if nm > 0 {
			s, t = append(s, ','), append(t, ',')
		}
		s, t = append(s, a.extra.s...), append(t, a.extra.t...)
		nm++
	}
	if k < a.total {
		mk := marker(a.list, a.total-k)
		if nm > 0 {
			s, t = append(s, ','), append(t, ',')
		}
		s, t = append(s, mk...), append(t, mk...)
	}
	return append(s, '}'), append(t, '}')
}

// walker emits one value into the structured (s) and text (t) renderings.
type walker struct {
	c        *Compiled
	nonce    string
	withhold bool
}

func (r *walker) key(k gjson.Result) piece {
	s := append([]byte(k.Raw), ':')
	if mayHoldTag(k.Raw) {
		return piece{s, append(AppendString(nil, Neutralize(k.Str)), ':')}
	}
	return piece{s, s}
}

func match(ps []pattern, path []string) (exact, prefix bool) {
	for _, p := range ps {
		if len(p) < len(path) {
			continue
		}
		ok := true
		for i, seg := range path {
			if p[i] != seg && !(p[i] == "#" && isIndex(seg)) {
				ok = false
				break
			}
		}
		if ok {
			if len(p) == len(path) {
				exact = true
			} else {
				prefix = true
			}
		}
	}
	return exact, prefix
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// emit renders v, at path, into s (structured) and t (text). under says
// an enclosing path is untrusted: a path listed as untrusted that holds
// an object or an array makes every string beneath it untrusted, each
// fenced with its own path as ref, so an upstream cannot shed the fence
// by answering a list where a string was expected.
func (r *walker) emit(s, t []byte, v gjson.Result, path []string, under bool) ([]byte, []byte) {
	if r.withhold {
		if exact, _ := match(r.c.sensitive, path); exact {
			return append(s, "null"...), append(t, "null"...)
		}
	}
	untrusted, deeper := match(r.c.untrusted, path)
	untrusted = untrusted || under
	if r.withhold && !deeper {
		_, deeper = match(r.c.sensitive, path)
	}
	switch {
	case v.Type == gjson.String:
		s = append(s, v.Raw...)
		switch {
		case untrusted:
			ref := strings.Join(path, ".")
			t = AppendString(t, OpenFence(r.nonce, ref)+Neutralize(v.Str)+CloseFence(r.nonce))
		case mayHoldTag(v.Raw):
			t = AppendString(t, Neutralize(v.Str))
		default:
			t = append(t, v.Raw...)
		}
		return s, t
	case v.IsObject() && (deeper || untrusted || mayHoldTag(v.Raw)):
		s, t = append(s, '{'), append(t, '{')
		i := 0
		v.ForEach(func(k, e gjson.Result) bool {
			if i > 0 {
				s, t = append(s, ','), append(t, ',')
			}
			s = append(append(s, k.Raw...), ':')
			if mayHoldTag(k.Raw) {
				t = AppendString(t, Neutralize(k.Str))
			} else {
				t = append(t, k.Raw...)
			}
			t = append(t, ':')
			// path is a stack: emit never keeps it, so children reuse it.
			s, t = r.emit(s, t, e, append(path, k.Str), untrusted)
			i++
			return true
		})
		return append(s, '}'), append(t, '}')
	case v.IsArray() && (deeper || untrusted || mayHoldTag(v.Raw)):
		s, t = append(s, '['), append(t, '[')
		i := 0
		v.ForEach(func(_, e gjson.Result) bool {
			if i > 0 {
				s, t = append(s, ','), append(t, ',')
			}
			s, t = r.emit(s, t, e, append(path, index(i)), untrusted)
			i++
			return true
		})
		return append(s, ']'), append(t, ']')
	}
	return append(s, v.Raw...), append(t, v.Raw...)
}

// indexes are the path segments of the first array positions, made once.
var indexes = func() []string {
	s := make([]string, 1024)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func index(i int) string {
	if i < len(indexes) {
		return indexes[i]
	}
	return strconv.Itoa(i)
}
