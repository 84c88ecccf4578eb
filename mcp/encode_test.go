package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzEncode: every value the wire encodes is JSON that encoding/json
// decodes to what was put in: strings (any bytes; invalid UTF-8 as
// U+FFFD), numbers, flags, the raw members copied as they are, and both
// eras' tails.
func FuzzEncode(f *testing.F) {
	f.Add("plain", "id", int64(1), true, false)
	f.Add("quote\" back\\slash <b>&amp;</b>", "\u2028", int64(-9), false, true)
	f.Add("ctl\x00\x01\x1f\x7f\n\r\t", "bad\xffutf8\xc3", int64(1<<53), true, true)
	f.Fuzz(func(t *testing.T, s, k string, n int64, b, modern bool) {
		var tail *modernTail
		if modern {
			tail = &modernTail{info: object{{"name", str(k)}, {"version", str(s)}}}
		}
		id := []byte(`"` + "x" + `"`)
		for _, v := range []value{
			str(s),
			strs{s, k},
			&response{id: id, result: &callResult{text: s, structured: []byte(`{"a":[1,2]}`), isError: b, tail: tail}},
			&response{id: nil, result: &listResult{tools: [][]byte{[]byte(`{"name":"t"}`), []byte(`{}`)}, nextCursor: k, cache: modern, tail: tail}},
			&response{id: []byte("7"), err: &errorObj{code: int(n % 100000), msg: s, data: object{{"error", str(k)}, {"n", num(n)}, {"ok", flag(b)}, {"skip", nil}}}},
			append(object{{"x", str(s)}}, tail.members()...),
		} {
			out := encode(nil, v)
			var got any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("encode(%#v) = %s: not JSON: %v", v, out, err)
			}
			switch v := v.(type) {
			case str:
				var want string
				w, _ := json.Marshal(string(v))
				_ = json.Unmarshal(w, &want)
				if got != want {
					t.Fatalf("encode(%q) decodes to %q, want %q", string(v), got, want)
				}
			case *response:
				m := got.(map[string]any)
				if m["jsonrpc"] != "2.0" {
					t.Fatalf("response %s: jsonrpc = %v", out, m["jsonrpc"])
				}
				if v.err != nil {
					e := m["error"].(map[string]any)
					var want map[string]any
					w, _ := json.Marshal(map[string]any{"code": v.err.code, "n": n, "ok": b})
					_ = json.Unmarshal(w, &want)
					d := e["data"].(map[string]any)
					if e["code"] != want["code"] || d["n"] != want["n"] || d["ok"] != want["ok"] {
						t.Fatalf("error %s, want code %v n %v ok %v", out, want["code"], want["n"], want["ok"])
					}
					if _, ok := d["skip"]; ok {
						t.Fatalf("a nil member was written: %s", out)
					}
				}
				if r, ok := v.result.(*callResult); ok {
					res := m["result"].(map[string]any)
					if !reflect.DeepEqual(res["structuredContent"], map[string]any{"a": []any{1.0, 2.0}}) || (res["isError"] == true) != r.isError {
						t.Fatalf("call result %s", out)
					}
					if _, has := res["resultType"]; has != modern {
						t.Fatalf("call result %s: resultType present %v, modern %v", out, has, modern)
					}
				}
			}
		}
	})
}
