package approval_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/approval"
)

func TestShownMakesHiddenTextVisible(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"bidi-override-is-a-marker", `{"iban":"DE89` + "\u202e" + `0001"}`, `{"iban":"DE89⟨U+202E⟩0001"}`},
		{"every-bidi-control", `"` + "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c" + `"`,
			`"⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩⟨U+2066⟩⟨U+2067⟩⟨U+2068⟩⟨U+2069⟩⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"`},
		{"zero-width", `"a` + "\u200b\u200c\u200d\u2060\ufeff" + `b"`, `"a⟨U+200B⟩⟨U+200C⟩⟨U+200D⟩⟨U+2060⟩⟨U+FEFF⟩b"`},
		{"long-run-of-spaces-is-counted", `"x` + strings.Repeat(" ", 3000) + `; ALSO: drop production database"`, `"x␠×3000; ALSO: drop production database"`},
		{"no-break-spaces-count-too", `"x` + strings.Repeat("\u00a0", 5) + `y"`, `"x␠×5y"`},
		{"short-runs-stay", `"a   b c"`, `"a   b c"`},
		{"indentation-stays", "{\n    \"a\": 1\n}", "{\n    \"a\": 1\n}"},
		{"escaped-quote-keeps-the-string-open", `"a\"` + "\u202e" + `"`, `"a\"⟨U+202E⟩"`},
		{"plain-text-is-unchanged", `{"q":"<b>drop</b> & 9007199254740992"}`, `{"q":"<b>drop</b> & 9007199254740992"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := approval.Shown([]byte(c.in)); got != c.want {
				t.Errorf("Shown(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	if got, want := approval.ShownText("bob\u202e"+strings.Repeat(" ", 9)+"x"), "bob⟨U+202E⟩␠×9x"; got != want {
		t.Errorf("ShownText = %q, want %q", got, want)
	}
}

// EscapeHidden keeps the JSON value and writes its hidden characters as
// escapes a terminal shows.
func TestEscapeHiddenKeepsTheValue(t *testing.T) {
	in := []byte(`{"iban":"DE89` + "\u202e" + `0001","tag":"` + "\U000E0041" + `","plain":"ok"}`)
	out := approval.EscapeHidden(in)
	if want := `{"iban":"DE89\u202e0001","tag":"\udb40\udc41","plain":"ok"}`; string(out) != want {
		t.Errorf("EscapeHidden = %s, want %s", out, want)
	}
	var a, b any
	if json.Unmarshal(in, &a) != nil || json.Unmarshal(out, &b) != nil {
		t.Fatal("not JSON")
	}
	if ja, _ := json.Marshal(a); string(ja) != string(must(json.Marshal(b))) {
		t.Errorf("EscapeHidden changed the value: %v != %v", a, b)
	}
	if plain := []byte(`{"a":"b"}`); &approval.EscapeHidden(plain)[0] != &plain[0] {
		t.Error("EscapeHidden copied text with nothing hidden")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// A run of MinSpaceRun spaces is the shortest one counted; one fewer is
// left as it is.
func TestShownCountsRunsFromMinSpaceRun(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"run-of-three-stays", `"a   b"`, `"a   b"`},
		{"run-of-four-is-counted", `"a    b"`, `"a␠×4b"`},
		{"run-at-the-end-of-plain-text", "x    ", "x␠×4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := approval.Shown([]byte(c.in))
			if !strings.HasPrefix(c.in, `"`) {
				got = approval.ShownText(c.in)
			}
			if got != c.want {
				t.Errorf("shown(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// Short JSON (a bare string, a one-key object) with a hidden character
// is escaped like any other.
func TestEscapeHiddenEscapesShortValues(t *testing.T) {
	for in, want := range map[string]string{
		`"` + "\u202e" + `"`:       `"\u202e"`,
		`{"a":"` + "\u200b" + `"}`: `{"a":"\u200b"}`,
	} {
		if got := string(approval.EscapeHidden([]byte(in))); got != want {
			t.Errorf("EscapeHidden(%q) = %s, want %s", in, got, want)
		}
	}
}
