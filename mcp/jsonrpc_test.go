package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		kind   msgKind // 0: refused
		code   int     // when refused
		id     string  // raw id expected (message or error); "" for none
		method string
	}{
		{"request-with-string-id", `{"jsonrpc":"2.0","id":"1","method":"tools/list"}`, kindRequest, 0, `"1"`, "tools/list"},
		{"request-with-number-id", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, kindRequest, 0, `1`, "tools/list"},
		{"big-integer-id-keeps-its-digits", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, kindRequest, 0, `123456789012345678901234567890`, "ping"},
		{"negative-id", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, kindRequest, 0, `-7`, "ping"},
		{"escaped-string-id-kept-raw", `{"jsonrpc":"2.0","id":"a\u0041\"<","method":"ping"}`, kindRequest, 0, `"a\u0041\"<"`, "ping"},
		{"whitespace-everywhere", " \n{ \"jsonrpc\" : \"2.0\" ,\t\"id\" : 3 , \"method\" : \"ping\" , \"params\" : { } }\n", kindRequest, 0, `3`, "ping"},
		{"escaped-member-name-counts", `{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`, kindRequest, 0, `1`, "ping"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kindNotification, 0, "", "notifications/initialized"},
		{"unknown-notification", `{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}`, kindNotification, 0, "", "notifications/whatever"},
		{"legacy-response-result", `{"jsonrpc":"2.0","id":5,"result":{}}`, kindResponse, 0, `5`, ""},
		{"legacy-response-error-null-id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, kindResponse, 0, `null`, ""},

		{"invalid-json", `{"jsonrpc":"2.0","id":1,`, 0, codeParseError, "", ""},
		{"empty-body", ``, 0, codeParseError, "", ""},
		{"trailing-garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, 0, codeParseError, "", ""},
		{"two-objects", `{"jsonrpc":"2.0","id":1,"method":"ping"}{}`, 0, codeParseError, "", ""},
		{"batch-is-refused", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 0, codeInvalidRequest, "", ""},
		{"empty-batch-is-refused", `[]`, 0, codeInvalidRequest, "", ""},
		{"scalar-is-refused", `"hello"`, 0, codeInvalidRequest, "", ""},
		{"missing-jsonrpc", `{"id":1,"method":"ping"}`, 0, codeInvalidRequest, `1`, ""},
		{"wrong-jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 0, codeInvalidRequest, `1`, ""},
		{"numeric-jsonrpc", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, 0, codeInvalidRequest, `1`, ""},
		{"null-id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"float-id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"exponent-id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"object-id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"bool-id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"array-id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"duplicate-method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, 0, codeInvalidRequest, `1`, ""},
		{"duplicate-id-is-unreadable", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"duplicate-via-escape", `{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"x"}`, 0, codeInvalidRequest, `1`, ""},
		{"wrong-case-method", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, 0, codeInvalidRequest, `1`, ""},
		{"wrong-case-id", `{"jsonrpc":"2.0","ID":1,"method":"ping"}`, 0, codeInvalidRequest, "", ""},
		{"unknown-top-level-member", `{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`, 0, codeInvalidRequest, `1`, ""},
		{"method-not-a-string", `{"jsonrpc":"2.0","id":1,"method":7}`, 0, codeInvalidRequest, `1`, ""},
		{"params-array", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, 0, codeInvalidRequest, `1`, ""},
		{"params-null", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, 0, codeInvalidRequest, `1`, ""},
		{"duplicate-in-params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, 0, codeInvalidRequest, `1`, ""},
		{"duplicate-unknown-in-params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":1,"x":2}}`, 0, codeInvalidRequest, `1`, ""},
		{"wrong-case-in-params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Name":"b"}}`, 0, codeInvalidRequest, `1`, ""},
		{"duplicate-in-meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, 0, codeInvalidRequest, `1`, ""},
		{"wrong-case-request-state", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","requestState":"s","RequestState":"t"}}`, 0, codeInvalidRequest, `1`, ""},
		{"wrong-case-traceparent", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"traceparent":"a","Traceparent":"b"}}}`, 0, codeInvalidRequest, `1`, ""},
		{"request-with-result", `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, 0, codeInvalidRequest, `1`, ""},
		{"response-with-both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, 0, codeInvalidRequest, `1`, ""},
		{"neither-method-nor-result", `{"jsonrpc":"2.0","id":1}`, 0, codeInvalidRequest, `1`, ""},
		{"response-without-id", `{"jsonrpc":"2.0","result":{}}`, 0, codeInvalidRequest, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, e := decode([]byte(tc.in))
			if tc.kind == 0 {
				if e == nil {
					t.Fatalf("decode(%s) = kind %d, want error %d", tc.in, m.kind, tc.code)
				}
				if e.code != tc.code || string(e.id) != tc.id {
					t.Fatalf("decode(%s) = error %d id %q (%s), want %d id %q", tc.in, e.code, e.id, e.msg, tc.code, tc.id)
				}
				return
			}
			if e != nil {
				t.Fatalf("decode(%s) = error %d %s, want kind %d", tc.in, e.code, e.msg, tc.kind)
			}
			if m.kind != tc.kind || string(m.id) != tc.id || m.method != tc.method {
				t.Fatalf("decode(%s) = kind %d id %q method %q, want %d %q %q", tc.in, m.kind, m.id, m.method, tc.kind, tc.id, tc.method)
			}
		})
	}
}

func TestDecodeParams(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get\"x","arguments":{"a":[1,{"b":"}"}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"other":1},"extra":true}}`
	m, e := decode([]byte(in))
	if e != nil {
		t.Fatalf("decode: %s", e.msg)
	}
	for _, c := range []struct{ what, got, want string }{
		{"name", string(m.name), `"get\"x"`},
		{"arguments", string(m.arguments), `{"a":[1,{"b":"}"}]}`},
		{"meta version", string(m.metaVersion), `"2026-07-28"`},
		{"meta caps", string(m.metaCaps), `{}`},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
		}
	}
	if name, _ := stringValue(m.name); name != `get"x` {
		t.Errorf("stringValue(name) = %q", name)
	}
}

func TestManyParamsMembersStayLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`)
	for i := range 50000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`":0`)
	}
	b.WriteString(`}}`)
	// Keys repeat, so this must be refused as a duplicate quickly.
	if _, e := decode([]byte(b.String())); e == nil || e.code != codeInvalidRequest {
		t.Fatalf("decode(50000 members with repeats) = %v, want -32600", e)
	}
}

func TestEncodeStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\n\r\t", "caf\u00e9 \u2028\u2029 😀", "bad\xffutf8\xc3", "<html>&"} {
		got := encode(nil, str(s))
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("encode(str(%q)) = %s: not JSON: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("encode(str(%q)) decodes to %q, encoding/json gives %q", s, back, wantBack)
		}
	}
}

// FuzzDecode: the decoder never panics; whatever it accepts, encoding/json
// reads the same way; and a reply carries the id bytes exactly as sent.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":"a\u0041\"","method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
		`{`, ``, `null`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, e := decode(b)
		if e != nil {
			out := encode(nil, &response{id: e.id, err: &errorObj{code: e.code, msg: e.msg}})
			if !json.Valid(out) {
				t.Fatalf("error reply for %q is not JSON: %s", b, out)
			}
			return
		}
		var std map[string]json.RawMessage
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("decode accepted %q but encoding/json refuses it: %v", b, err)
		}
		if m.kind == kindRequest || m.kind == kindNotification {
			var method string
			if err := json.Unmarshal(std["method"], &method); err != nil || method != m.method {
				t.Fatalf("decode(%q) method %q, encoding/json %q (%v)", b, m.method, method, err)
			}
		}
		if m.kind != kindRequest {
			return
		}
		for _, out := range [][]byte{
			encode(nil, &response{id: m.id, result: object{}}),
			encode(nil, &response{id: m.id, err: &errorObj{code: codeInvalidParams, msg: "x"}}),
		} {
			var reply map[string]json.RawMessage
			if err := json.Unmarshal(out, &reply); err != nil {
				t.Fatalf("reply to %q is not JSON: %s", b, out)
			}
			if !bytes.Equal(reply["id"], m.id) || !bytes.Equal(bytes.TrimSpace(std["id"]), m.id) {
				t.Fatalf("reply id %s, request id %s, decoded %s", reply["id"], std["id"], m.id)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search_jobs","arguments":{"state":"Failed","tags":["a","b"],"page_size":20},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, e := decode(msg); e != nil {
			b.Fatal(e.msg)
		}
	}
}
