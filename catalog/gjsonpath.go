package catalog

import (
	"fmt"
	"strings"
)

// gjson has no validator for paths: a path it cannot parse simply finds
// nothing, so a broken response.select reads, at run time, as an empty
// answer ("select: dta" passed validate, and an agent watching
// alerts saw none). checkPath refuses, at load, only what is certainly
// broken, mirroring how gjson v1.20 reads a path:
//
//   - an empty component: a leading or trailing "." or "|", or two
//     separators in a row ("data..alerts"). A leading ".." is gjson's
//     JSON Lines prefix and is allowed.
//   - a query "#(…)" or "#[…]", a multipath "{…}" or "[…]" at the start of
//     a component, a modifier's JSON argument ("@pretty:{…}") or a literal
//     ("!{…}") that is never closed, or a string in them never closed.
//   - an empty query "#()".
//   - a query comparing with "~x" where x is not true, false, null or *.
//
// Everything else is allowed: gjson reads an unknown "@name" as a key
// (JSON-LD's "@id", XML's "@xmlns:xsi"), brackets inside a key ("a[0]")
// are literal, and an unquoted query value (#(name==Tom)) compares as a
// string. A typo that is valid syntax is caught at run time instead: a
// path that matches nothing in a 2xx answer is a tool error.

// maxQueryNesting bounds nested queries ("#(a.#(b.#(…)))") a path may hold.
const maxQueryNesting = 16

// pathError is a syntax error in a gjson path: at is the byte offset
// where it is seen, msg says what is wrong.
type pathError struct {
	at  int
	msg string
}

func (e *pathError) Error() string { return e.msg }

// checkPath reports the first certain syntax error in the gjson path p,
// or nil. p is not empty.
func checkPath(p string) *pathError { return checkPathFrom(p, 0, 0) }

// checkPathFrom checks p, which stands at byte offset base of the path
// being checked, depth queries deep.
func checkPathFrom(p string, base, depth int) *pathError {
	if depth > maxQueryNesting {
		return &pathError{base, fmt.Sprintf("it nests queries more than %d deep", maxQueryNesting)}
	}
	errAt := func(at int, format string, args ...any) *pathError {
		return &pathError{base + at, fmt.Sprintf(format, args...)}
	}
	char := func(at int) int { return base + at + 1 } // 1-based, for messages
	i := 0
	if strings.HasPrefix(p, "..") {
		i = 2 // JSON Lines
	}
	for {
		s := i
		if s == len(p) {
			return errAt(s-1, "it ends with %q (an empty last component)", string(p[s-1]))
		}
		switch c := p[s]; {
		case c == '.' || c == '|':
			if s == 0 {
				return errAt(0, "it starts with %q (an empty first component)", string(c))
			}
			return errAt(s, "it has an empty component at character %d (two separators in a row)", char(s))
		case c == '[' || c == '{':
			end, e := skipGroup(p, s, base, "multipath")
			if e != nil {
				return e
			}
			i = end
		case c == '!' && (s == 0 || p[s-1] == '|') && s+1 < len(p) && strings.IndexByte(`{["`, p[s+1]) >= 0:
			end, e := skipGroup(p, s+1, base, "literal")
			if e != nil {
				return e
			}
			i = end
		case c == '!' && (s == 0 || p[s-1] == '|') && s+1 < len(p) && (p[s+1] == '-' || p[s+1] >= '0' && p[s+1] <= '9'):
			// A number literal: gjson reads the rest of the path into it,
			// separators included ("!0.x|y" is the literal "0.x|y").
			return nil
		case c == '@':
			j := s + 1
			for j < len(p) && p[j] != '.' && p[j] != '|' && p[j] != ':' {
				j++
			}
			i = j
			if j+1 < len(p) && p[j] == ':' {
				if strings.IndexByte(`{["`, p[j+1]) >= 0 {
					end, e := skipGroup(p, j+1, base, "modifier argument")
					if e != nil {
						return e
					}
					i = end
				} else {
					// A simple argument runs to the next "|": gjson does
					// not read it as a path, nor does this check.
					k := strings.IndexByte(p[j:], '|')
					if k < 0 {
						return nil
					}
					i = j + k
				}
			}
		case c == '#' && s+1 < len(p) && (p[s+1] == '(' || p[s+1] == '['):
			end, e := checkQuery(p, s, base, depth)
			if e != nil {
				return e
			}
			i = end
		}
		for i < len(p) && p[i] != '.' && p[i] != '|' {
			if p[i] == '\\' {
				i++ // a "\" at the very end is ignored, as gjson does
			}
			i++
		}
		if i >= len(p) {
			return nil
		}
		i++ // the separator
	}
}

// skipGroup skips the bracketed group (or JSON string) opening at p[s],
// as gjson does: brackets of any kind nest, strings hold them, "\"
// escapes. It returns the index after the group.
func skipGroup(p string, s, base int, what string) (int, *pathError) {
	if p[s] == '"' {
		end, ok := skipString(p, s)
		if !ok {
			return 0, &pathError{base + s, fmt.Sprintf("the string opened at character %d is never closed", base+s+1)}
		}
		return end, nil
	}
	depth := 0
	for i := s; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '"':
			end, ok := skipString(p, i)
			if !ok {
				return 0, &pathError{base + i, fmt.Sprintf("the string opened at character %d is never closed", base+i+1)}
			}
			i = end - 1
		case '[', '{', '(':
			depth++
		case ']', '}', ')':
			if depth--; depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, &pathError{base + s, fmt.Sprintf("the %s opened at character %d is never closed", what, base+s+1)}
}

// skipString returns the index after the JSON string opening at p[s].
func skipString(p string, s int) (int, bool) {
	for i := s + 1; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// checkQuery checks the query "#(…)" or "#[…]" at p[s] as gjson's
// parseQuery reads it (only "(" and "[" nest inside), and the path on its
// left, and returns the index after it (and after a trailing "#").
func checkQuery(p string, s, base, depth int) (int, *pathError) {
	errAt := func(at int, format string, args ...any) *pathError {
		return &pathError{base + at, fmt.Sprintf(format, args...)}
	}
	level, op, end := 1, -1, -1
scan:
	for i := s + 2; i < len(p); i++ {
		c := p[i]
		if level == 1 && op < 0 && strings.IndexByte("!=<>%", c) >= 0 {
			op = i
			continue
		}
		switch c {
		case '\\':
			i++
		case '(', '[':
			level++
		case ')', ']':
			if level--; level == 0 {
				end = i
				break scan
			}
		case '"':
			e, ok := skipString(p, i)
			if !ok {
				return 0, errAt(i, "the string opened at character %d is never closed", base+i+1)
			}
			i = e - 1
		}
	}
	if end < 0 {
		return 0, errAt(s, "the query opened at character %d is never closed", base+s+1)
	}
	inner := p[s+2 : end]
	if strings.TrimSpace(inner) == "" {
		return 0, errAt(s, "the query at character %d is empty", base+s+1)
	}
	left := inner
	if op >= 0 {
		left = p[s+2 : op]
		value := strings.TrimLeft(p[op:end], "!=<>%")
		value = strings.TrimSpace(value)
		if strings.HasPrefix(value, "~") {
			switch value[1:] {
			case "true", "false", "null", "*":
			default:
				return 0, errAt(op, "the query at character %d compares with %q; after ~ gjson takes only true, false, null or *", base+s+1, value)
			}
		}
	}
	lead := len(left) - len(strings.TrimLeft(left, " \t"))
	if qp := strings.TrimSpace(left); qp != "" {
		if e := checkPathFrom(qp, base+s+2+lead, depth+1); e != nil {
			return 0, e
		}
	}
	next := end + 1
	if next < len(p) && p[next] == '#' {
		next++
	}
	return next, nil
}
