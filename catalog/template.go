package catalog

import (
	"errors"
	"fmt"
	"strings"
)

// Template is a string with {name} placeholders, parsed once at load.
// "{{" and "}}" stand for literal braces.
type Template struct {
	Raw   string
	Parts []Part
}

// Part is literal text or, when Name is set, a placeholder.
type Part struct {
	Text string
	Name string
	// Time is set when the placeholder is a computed time ({now},
	// {now+ttl.unix}, see [TimeRef]); Name is then its text, "now+ttl.unix".
	Time *TimeRef
}

// ParseTemplate parses s. Placeholder names follow the argument-name rule
// [A-Za-z_][A-Za-z0-9_.-]*, except computed times (see [ParseTimeRef]).
func ParseTemplate(s string) (Template, error) {
	t := Template{Raw: s}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.Parts = append(t.Parts, Part{Text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return Template{}, fmt.Errorf("unclosed placeholder at offset %d", i)
			}
			name := s[i+1 : i+1+end]
			tr, isTime, err := ParseTimeRef(name)
			switch {
			case err != nil:
				return Template{}, err
			case !isTime && !validArgName(name):
				return Template{}, fmt.Errorf("placeholder {%s} is not a valid argument name", name)
			}
			flush()
			part := Part{Name: name}
			if isTime {
				part.Time = &tr
			}
			t.Parts = append(t.Parts, part)
			i += end + 1
		case c == '}':
			return Template{}, errors.New("unmatched '}' (write '}}' for a literal brace)")
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return t, nil
}

// Names returns the placeholder names in order of appearance, with repeats.
// Computed times are left out: see [Template.Times].
func (t Template) Names() []string {
	var names []string
	for _, p := range t.Parts {
		if p.Name != "" && p.Time == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// Whole reports the placeholder name when the template is exactly "{name}".
func (t Template) Whole() (string, bool) {
	if len(t.Parts) == 1 && t.Parts[0].Name != "" {
		return t.Parts[0].Name, true
	}
	return "", false
}

// IsLiteral reports whether the template has no placeholders.
func (t Template) IsLiteral() bool {
	for _, p := range t.Parts {
		if p.Name != "" {
			return false
		}
	}
	return true
}

func validArgName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Times returns the template's computed time placeholders in order of
// appearance, with repeats.
func (t Template) Times() []TimeRef {
	var refs []TimeRef
	for _, p := range t.Parts {
		if p.Time != nil {
			refs = append(refs, *p.Time)
		}
	}
	return refs
}
