package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestParseTemplate pins what a request template accepts and the message
// for each thing it refuses: placeholder names of 1 to 128 bytes, braces
// doubled for literals, and an empty or unclosed placeholder named as such.
func TestParseTemplate(t *testing.T) {
	name := func(n int) string { return "a" + strings.Repeat("b", n-1) }
	for _, tc := range []struct {
		in, err string
		names   []string
		literal bool
	}{
		{in: "/jobs", literal: true},
		{in: "/a{{b}}c", literal: true},
		{in: "/jobs/{id}", names: []string{"id"}},
		{in: "{a}-{b}/{a}", names: []string{"a", "b", "a"}},
		{in: "/{" + name(127) + "}", names: []string{name(127)}},
		{in: "/{" + name(128) + "}", names: []string{name(128)}},
		{in: "/{" + name(129) + "}", err: "placeholder {" + name(129) + "} is not a valid argument name"},
		{in: "/x/{}", err: "placeholder {} is not a valid argument name"},
		{in: "/x/{id", err: "unclosed placeholder at offset 3"},
		{in: "/x}", err: "unmatched '}' (write '}}' for a literal brace)"},
		{in: "/{now}", literal: false},
	} {
		tpl, err := ParseTemplate(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseTemplate(%.40q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTemplate(%.40q) = %v", tc.in, err)
			continue
		}
		if got := tpl.Names(); !slices.Equal(got, tc.names) {
			t.Errorf("ParseTemplate(%.40q).Names() = %q, want %q", tc.in, got, tc.names)
		}
		if tpl.IsLiteral() != tc.literal {
			t.Errorf("ParseTemplate(%.40q).IsLiteral() = %v, want %v", tc.in, tpl.IsLiteral(), tc.literal)
		}
	}
}
