package rendering

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// CheckFences verifies a text rendering: it is a JSON object; every string
// at an untrusted path sits inside exactly one well-formed fence with the
// given nonce and its own path as ref; and no other fence-shaped tag exists
// anywhere, in keys, values or fenced content. Tests and fuzzers use it.
func CheckFences(text []byte, nonce string, untrusted []string) error {
	root := gjson.ParseBytes(text)
	if !gjson.ValidBytes(text) || !root.IsObject() {
		return fmt.Errorf("rendering is not a JSON object")
	}
	pats := compile(untrusted)
	return checkValue(root, nil, nonce, pats, false)
}

// checkValue checks v at path; under says an enclosing path is untrusted,
// so every string beneath must be fenced too.
func checkValue(v gjson.Result, path []string, nonce string, pats []pattern, under bool) error {
	if exact, _ := match(pats, path); exact && len(path) > 0 {
		under = true
	}
	switch {
	case v.Type == gjson.String:
		ref := strings.Join(path, ".")
		if under {
			open, closing := OpenFence(nonce, ref), CloseFence(nonce)
			if !strings.HasPrefix(v.Str, open) || !strings.HasSuffix(v.Str, closing) || len(v.Str) < len(open)+len(closing) {
				return fmt.Errorf("%s: untrusted value is not fenced: %.80q", ref, v.Str)
			}
			if inner := v.Str[len(open) : len(v.Str)-len(closing)]; HasFenceTag(inner) {
				return fmt.Errorf("%s: fenced content holds a fence-shaped tag", ref)
			}
			return nil
		}
		if HasFenceTag(v.Str) {
			return fmt.Errorf("%s: a fence-shaped tag outside a fence: %.80q", ref, v.Str)
		}
	case v.IsObject():
		var err error
		v.ForEach(func(k, e gjson.Result) bool {
			if HasFenceTag(k.Str) {
				err = fmt.Errorf("%s: a key holds a fence-shaped tag", strings.Join(path, "."))
				return false
			}
			err = checkValue(e, append(path[:len(path):len(path)], k.Str), nonce, pats, under)
			return err == nil
		})
		return err
	case v.IsArray():
		var err error
		i := 0
		v.ForEach(func(_, e gjson.Result) bool {
			err = checkValue(e, append(path[:len(path):len(path)], strconv.Itoa(i)), nonce, pats, under)
			i++
			return err == nil
		})
		return err
	}
	return nil
}
