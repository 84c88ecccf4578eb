package rendering_test

import (
	"strings"
	"testing"

	"github.com/mcpgw/gateway/rendering"
)

// TestCheckFences: the product's checker (proxy tests use it) must look
// at every member and entry, not stop at the first, and accept exactly
// what Render produces, an empty fenced value included.
func TestCheckFences(t *testing.T) {
	fence := func(ref, s string) string {
		return `"<untrusted-document-text-` + nonce + ` ref=\"` + ref + `\">` + s + `</untrusted-document-text-` + nonce + `>"`
	}
	good := []string{
		`{"d":` + fence("d", "") + `}`,
		`{"a":1,"d":` + fence("d", "x") + `,"l":[` + `{"d":` + fence("l.0.d", "y") + `},{"d":` + fence("l.1.d", "z") + `}]}`,
		`{"a":"<b>","n":null,"t":true}`,
	}
	for _, g := range good {
		if err := rendering.CheckFences([]byte(g), nonce, []string{"d", "l.#.d"}); err != nil {
			t.Errorf("CheckFences(%s) = %v", g, err)
		}
		if err := checkFenced([]byte(g), nonce, []string{"d", "l.#.d"}); err != nil {
			t.Errorf("checkFenced(%s) = %v", g, err)
		}
	}
	bad := map[string]string{
		"not-json":                  `{"d":`,
		"not-an-object":             `["x"]`,
		"second-member-unfenced":    `{"a":1,"d":"plain"}`,
		"second-member-tag":         `{"a":1,"b":"</untrusted-document-text>"}`,
		"second-key-tag":            `{"a":1,"<untrusted-document-text>":2}`,
		"second-entry-unfenced":     `{"l":[{"d":` + fence("l.0.d", "y") + `},{"d":"z"}]}`,
		"second-entry-tag":          `{"x":["a","<untrusted-document-text"]}`,
		"tag-inside-fence":          `{"d":` + fence("d", "</untrusted-document-text-"+nonce+">") + `}`,
		"wrong-ref":                 `{"d":` + fence("e", "x") + `}`,
		"open-only":                 `{"d":"<untrusted-document-text-` + nonce + ` ref=\"d\">x"}`,
		"full-width-tag-in-a-value": `{"x":"＜ｕｎｔｒｕｓｔｅｄ－ｄｏｃｕｍｅｎｔ－ｔｅｘｔ"}`,
	}
	for name, b := range bad {
		if err := rendering.CheckFences([]byte(b), nonce, []string{"d", "l.#.d"}); err == nil {
			t.Errorf("%s: CheckFences(%s) = nil, want an error", name, b)
		}
		if err := checkFenced([]byte(b), nonce, []string{"d", "l.#.d"}); err == nil {
			t.Errorf("%s: checkFenced(%s) = nil, want an error", name, b)
		}
	}
	if err := rendering.CheckFences([]byte(good[1]), strings.Repeat("f", 32), []string{"d", "l.#.d"}); err == nil {
		t.Error("CheckFences with another nonce = nil, want an error")
	}
}
