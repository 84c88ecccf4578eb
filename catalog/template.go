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
}

// ParseTemplate parses s. Placeholder names follow the argument-name rule
// [A-Za-z_][A-Za-z0-9_.-]*.
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
			if !validArgName(name) {
				return Template{}, fmt.Errorf("placeholder {%s} is not a valid argument name", name)
			}
			flush()
			t.Parts = append(t.Parts, Part{Name: name})
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
func (t Template) Names() []string {
	var names []string
	for _, p := range t.Parts {
		if p.Name != "" {
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
