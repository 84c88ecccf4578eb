package rendering_test

import (
	"strings"
	"testing"

	"github.com/mcpgw/gateway/rendering"
)

func TestReadable(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		body string
		why  string // "" when readable
	}{
		{deep(rendering.MaxDepth), ""},
		{deep(rendering.MaxDepth + 1), "nested deeper than 128"},
		{`{"a":` + strings.Repeat(`{"b":`, rendering.MaxDepth) + `1` + strings.Repeat("}", rendering.MaxDepth+1), "nested deeper"},
		// Brackets and quotes inside strings are text.
		{`["` + strings.Repeat("[", 500) + `\"` + strings.Repeat("{", 500) + `"]`, ""},
		{`{"k\\":"[[[[","v":"\\\\"}`, ""},
		{`[1e308,-1.7976931348623157e308,1e-400,0.5E+2,-0]`, ""},
		{`{"n":1e400}`, "holds the number 1e400"},
		{`[-1E+309]`, "holds the number -1E+309"},
		{`[` + strings.Repeat("9", 400) + `]`, "beyond what a 64-bit float holds"},
		{`[` + strings.Repeat("9", 300) + `]`, ""},
		{``, ""},
		{`"unterminated [[[[`, ""},
	} {
		got := rendering.Readable([]byte(c.body))
		switch {
		case c.why == "" && got != nil:
			t.Errorf("Readable(%.60s…) = %v, want nil", c.body, got)
		case c.why != "" && (got == nil || !strings.Contains(got.Error(), c.why)):
			t.Errorf("Readable(%.60s…) = %v, want %q", c.body, got, c.why)
		}
	}
}
