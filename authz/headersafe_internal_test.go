package authz

import (
	"strings"
	"testing"
)

// TestHeaderSafeBound: an error_description is at most 200 bytes, whatever
// a catalog's claim path holds (scopesDesc quotes 64 runes of it, 192
// bytes of "€" alone), and every byte outside RFC 6750's set is replaced,
// one for one, never dropped or passed.
func TestHeaderSafeBound(t *testing.T) {
	for _, n := range []int{199, 200, 201} {
		if got := headerSafe(strings.Repeat("a", n)); len(got) != min(n, 200) {
			t.Errorf("headerSafe(%d bytes) is %d bytes, want %d", n, len(got), min(n, 200))
		}
	}
	if got := headerSafe(scopesDesc(strings.Repeat("€", 64))); len(got) != 200 || strings.ContainsAny(got, "€\"\\") {
		t.Errorf("headerSafe(scopesDesc(64 × €)) = %q (%d bytes), want 200 bytes of header-safe text", got, len(got))
	}
	if got, want := headerSafe("a\"b\\c\x00d\x7fe\u00e9"), "a'b?c?d?e??"; got != want {
		t.Errorf("headerSafe = %q, want %q", got, want)
	}
}
