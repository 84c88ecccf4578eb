package catalog

import (
	"strings"
	"testing"
)

// TestSafePath pins how an output violation names its place: array
// indexes in brackets (up to 11 digits), member names kept only when they
// are 1 to 64 bytes of [A-Za-z0-9_.-] and shown as "?" otherwise (they are
// upstream data), and the whole cut with "…" once past 256 bytes.
func TestSafePath(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		loc  []string
		want string
	}{
		{[]string{"jobs", "3", "state"}, "jobs[3].state"},
		{[]string{"azAZ09_-."}, "azAZ09_-."},
		// One past each end of each class.
		{[]string{"x@"}, "?"}, {[]string{"x["}, "?"}, {[]string{"x`"}, "?"}, {[]string{"x{"}, "?"},
		{[]string{"x/"}, "?"}, {[]string{"x:"}, "?"}, {[]string{"x,"}, "?"}, {[]string{""}, "?"},
		{[]string{a(64)}, a(64)},
		{[]string{a(65)}, "?"},
		{[]string{"r", "12345678901"}, "r[12345678901]"},
		{[]string{"r", "123456789012"}, "r.123456789012"},
		// 64 + 65 + 65 + 62 = 256 bytes: the next member is still written;
		// one byte more and it is cut.
		{[]string{a(64), a(64), a(64), a(61), "b"}, strings.Join([]string{a(64), a(64), a(64), a(61), "b"}, ".")},
		{[]string{a(64), a(64), a(64), a(62), "b"}, strings.Join([]string{a(64), a(64), a(64), a(62)}, ".") + "…"},
	} {
		if got := safePath(tc.loc); got != tc.want {
			t.Errorf("safePath(%.60q) = %.80q, want %.80q", tc.loc, got, tc.want)
		}
	}
}

// TestPublishedOutputNote: the sensitive note member is published only for
// tools that withhold something, under the tool's own note field name.
func TestPublishedOutputNote(t *testing.T) {
	base := &Tool{OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}}
	if props := publishedOutput(base)["properties"].(map[string]any); props[DefaultSensitiveNote] != nil {
		t.Errorf("a tool without sensitive paths publishes %q", DefaultSensitiveNote)
	}
	withheld := &Tool{OutputSchema: base.OutputSchema, Response: Response{Sensitive: []string{"a"}, SensitiveNoteField: "why"}}
	props := publishedOutput(withheld)["properties"].(map[string]any)
	if props["why"] == nil || props[DefaultSensitiveNote] != nil {
		t.Errorf("published properties = %v, want the tool's note field \"why\" only", props)
	}
}
