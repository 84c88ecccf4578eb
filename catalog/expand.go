package catalog

import (
	"fmt"
	"strings"

	"github.com/mcpgw/gateway/internal/text"
)

// expand replaces ${NAME} and ${NAME:-default} in s with values from
// lookup, and $$ with a literal $. A $ followed by anything else is kept,
// so regular expressions ending in $ need no escaping.
//
// It runs on decoded scalar values, never on the raw file: a value holding
// ": " or a newline cannot reshape the document. Values from the
// environment are not expanded again.
//
// As in POSIX shells, the default applies when NAME is unset or empty, and
// may itself hold ${...}. expand returns the names of unset variables that
// have no default, and an error for malformed syntax.
func expand(s string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(s, "$") {
		return s, nil, nil
	}
	var b strings.Builder
	var unset []string
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) || s[i+1] != '$' && s[i+1] != '{' {
			b.WriteByte(c)
			continue
		}
		if s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		end := closingBrace(s, i+2)
		if end < 0 {
			return "", nil, fmt.Errorf("unclosed %q (write $$ for a literal $)", clip(s[i:]))
		}
		ref := s[i+2 : end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", nil, fmt.Errorf("malformed %q: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _", clip(s[i:end+1]))
		}
		v, ok := lookup(name)
		switch {
		case ok && v != "":
			b.WriteString(v)
		case hasDef:
			dv, du, err := expand(def, lookup)
			if err != nil {
				return "", nil, err
			}
			b.WriteString(dv)
			unset = append(unset, du...)
		case ok: // set and empty, no default: empty is what was asked for
		default:
			unset = append(unset, name)
		}
		i = end
	}
	return b.String(), unset, nil
}

// closingBrace returns the index of the '}' that closes a "${" whose body
// starts at i, skipping nested ${...} and $$; -1 if there is none.
func closingBrace(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch {
		case s[i] == '$' && i+1 < len(s) && (s[i+1] == '$' || s[i+1] == '{'):
			if s[i+1] == '{' {
				depth++
			}
			i++
		case s[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// validEnvName reports whether s is a portable environment variable name.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string { return text.Clip(s, 40) }
