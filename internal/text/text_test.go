package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"short is kept", "abc", 3, "abc"},
		{"long is cut and marked", "abcdef", 3, "abc…"},
		{"never inside a character", "ab€cd", 4, "ab…"},
		{"trailing space before the mark goes", "ab   cd", 4, "ab…"},
		{"invalid bytes become U+FFFD", "a\xffb", 10, "a\uFFFDb"},
		{"zero keeps only the mark", "abc", 0, "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clip(tc.in, tc.n); got != tc.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func FuzzClip(f *testing.F) {
	f.Add("ab€cd", 4)
	f.Add("\xff\xfe日本", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		got := Clip(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q, not valid UTF-8", s, n, got)
		}
		body, cut := strings.CutSuffix(got, Ellipsis)
		if len(body) > n && cut {
			t.Fatalf("Clip(%q, %d) = %q: %d bytes before the mark", s, n, got, len(body))
		}
		if !cut && got != strings.ToValidUTF8(s, "\uFFFD") {
			t.Fatalf("Clip(%q, %d) = %q changed a string it did not cut", s, n, got)
		}
	})
}
