package proxy

import (
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
)

func TestRedirectTargetsWithinPrefix(t *testing.T) {
	item := redirectPolicy{prefix: "/am/api/v2/silence/"}
	whole := redirectPolicy{prefix: "/am/api/v2/status", whole: true}
	midSegment := redirectPolicy{prefix: "/v1/jobs-"}
	escaped := redirectPolicy{prefix: "/v1/caf%C3%A9/%C3%AF%AA%FA/"}
	afterSlash := redirectPolicy{prefix: "/v1/x/%C3%A9/"}
	cases := []struct {
		pol    redirectPolicy
		target string
		want   bool
	}{
		{item, "/am/api/v2/silence/new", true},
		{item, "/am/api/v2/silence/a%20b", true},
		{item, "/am/api/v2/silence/50%25", true},
		{item, "/am/api/v2/silence/new/", true},
		{item, "/am/api/v2/silence/", false},
		{item, "/am/api/v2/silence", false},
		{item, "/am/api/v2/status", false},
		{item, "/am/api/v2/silence/..%2Fstatus", false},
		{item, "/am/api/v2/silence/..%2fstatus", false},
		{item, "/am/api/v2/silence/%2e%2e/status", false},
		{item, "/am/api/v2/silence/%2E%2E%2Fstatus", false},
		{item, "/am/api/v2/silence/%252e%252e%252fstatus", false},
		{item, "/am/api/v2/silence/..%5Cstatus", false},
		{item, "/am/api/v2/silence/..%255cstatus", false},
		{item, "/am/api/v2/silence/..;/status", false},
		{item, "/am/api/v2/silence/%2e%2e%3B/status", false},
		{item, "/am/api/v2/silence/%u002e%u002e/status", false},
		{item, "/am/api/v2/silence/%25" + strings.Repeat("25", 12) + "41", false},
		{item, "/am/api/v2/silence/%25" + strings.Repeat("25", 4) + "41", true},
		// maxDecodes: a target still changing at its ninth decoding is
		// refused; one that stops at its eighth is read.
		{item, "/am/api/v2/silence/%" + strings.Repeat("25", 7) + "41", true},
		{item, "/am/api/v2/silence/%" + strings.Repeat("25", 8) + "41", false},
		{item, "/am/api/v2/silence/%" + strings.Repeat("25", 6) + "41", true},
		{whole, "/am/api/v2/status", true},
		{whole, "/am/api/v2/status/", true},
		{whole, "/am/api/v2/status/x", true},
		{whole, "/am/api/v2/statusx", false},
		{whole, "/am/api/v2/status/..", false},
		{whole, "/am/api/v2/status/%2E%2E", false},
		{midSegment, "/v1/jobs-42", true},
		{midSegment, "/v1/jobs-42%2F..%2F..%2Fadmin", false},
		{midSegment, "/v1/jobs", false},
		// A sibling whose name extends the prefix's last segment.
		{item, "/am/api/v2/silencex", false},
		{item, "/am/api/v2/silence;x/new", false},
		// No path at all (a Location of just an origin).
		{item, "", false},
		// Escapes compare without regard to hex case, every hex letter.
		{escaped, "/v1/caf%c3%a9/%c3%af%aa%fa/x", true},
		{escaped, "/v1/caf%C3%A9/%C3%AF%AA%FA/x", true},
		{escaped, "/v1/caf%c3%a9/%c3%af%aa%fb/x", false},
		{escaped, "/v1/caf%c3%a9/%c3%af%aa%fa", false},
		{afterSlash, "/v1/x/%c3%a9/y", true},
		{afterSlash, "/v1/x/%C3%a9/y", true},
		{redirectPolicy{prefix: "/v1/x/y/"}, "/v1/x/y/a%2e..", true},
		// A "%" that starts no escape, at the very end.
		{item, "/am/api/v2/silence/x%4", true},
		{item, "/am/api/v2/silence/x%", true},
	}
	for _, tc := range cases {
		if got := tc.pol.within(tc.target); got != tc.want {
			t.Errorf("within(%q) under %q = %v, want %v", tc.target, tc.pol.prefix, got, tc.want)
		}
	}
}

func TestPercentDecode(t *testing.T) {
	cases := map[string]string{
		"abc":          "abc",
		"%2e%2E":       "..",
		"%2":           "%2",
		"%zz%":         "%zz%",
		"%252e":        "%2e",
		"%u002e%U002F": "./",
		"%c0%ae":       "\xc0\xae", // overlong ".": bytes, not "."
		"50%":          "50%",
		// Every edge of the hex digits: '/' ':' '@' 'G' '`' 'g' are not.
		"%00%09%90%99": "\x00\x09\x90\x99",
		"%aa%ff%AA%FF": "\xaa\xff\xaa\xff",
		"%/0%:0%0/%0:": "%/0%:0%0/%0:",
		"%@0%G0%0@%0G": "%@0%G0%0@%0G",
		"%`0%g0%0`%0g": "%`0%g0%0`%0g",
		// An escape that ends the string; one cut short by it.
		"a%41":    "aA",
		"a%4":     "a%4",
		"%u0041":  "A",
		"%u004":   "%u004",
		"%u00411": "A1",
		"%u004G":  "%u004G",
		"%x0041":  "%x0041",
		"%uFFfd":  "\uFFFD",
	}
	for in, want := range cases {
		if got, _ := percentDecode(in); got != want {
			t.Errorf("percentDecode(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPathValueStaysInSegment checks what buildPath promises: whatever a
// value is, the path it accepts, decoded any number of times and cleaned
// as a server would, stays under the template's prefix with the template's
// shape: no segment added, removed, emptied or made a dot segment.
func FuzzPathValueStaysInSegment(f *testing.F) {
	for _, s := range []string{
		"abc", "../status", "..%2Fstatus", "%2e%2e", "%252e%252e%252f", `a\b`, "a%5Cb", ".", "..", "%2E",
		"a/b", "a//b", "a/../b", "..;x", "%u002e%u002e", "%c0%ae%c0%ae", "50%", "a b?c#d",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	one := compilePath(mustTemplate(f, "/api/v2/silence/{id}/x"), nil)
	many := compilePath(mustTemplate(f, "/api/v2/files/{id}/raw"), []string{"id"})
	f.Fuzz(func(t *testing.T, v string, multi bool) {
		parts := one
		if multi {
			parts = many
		}
		p, err := buildPath(parts, map[string]any{"id": v}, binding{})
		if err != nil {
			return
		}
		prefix, suffix := "/api/v2/silence/", "/x"
		if multi {
			prefix, suffix = "/api/v2/files/", "/raw"
		}
		if p.escaped[:p.fixed] != prefix || p.whole {
			t.Fatalf("buildPath(%q) fixed %q, whole %v", v, p.escaped[:p.fixed], p.whole)
		}
		segments := strings.Count(p.escaped, "/")
		if !multi && segments != 5 {
			t.Fatalf("buildPath(%q) = %q: %d segments", v, p.escaped, segments)
		}
		s := p.escaped
		for level := 0; ; level++ {
			read := strings.ReplaceAll(s, `\`, "/")
			if cleanPath(read) != read || strings.Count(read, "/") != segments || !underPath(read, prefix, false) ||
				!strings.HasPrefix(read, prefix) || !strings.HasSuffix(read, suffix) || strings.ContainsAny(read, "\x00\r\n") {
				t.Fatalf("buildPath(%q) = %q, which decodes (%d times) to %q", v, p.escaped, level, s)
			}
			d, changed := percentDecode(s)
			if !changed {
				break
			}
			if level == maxDecodes {
				t.Fatalf("buildPath(%q) = %q still decodes after %d levels", v, p.escaped, maxDecodes)
			}
			s = d
		}
	})
}

func mustTemplate(tb testing.TB, s string) catalog.Template {
	tb.Helper()
	tpl, err := catalog.ParseTemplate(s)
	if err != nil {
		tb.Fatal(err)
	}
	return tpl
}
