package rendering_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgw/gateway/rendering"
)

// TestShapeCompactsLikeEncodingJSON: white space between tokens goes,
// white space and escapes inside strings stay, exactly as json.Compact
// would have it.
func TestShapeCompactsLikeEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":"b" ,"c":1}`,
		`{"a": 1}`,
		"{\"a\":\"b\"\t,\"c\":\n1\r}",
		`{"a":"", "b":1}`,
		`{"a":"x y", "b":"\" z", "c":"\\", "d":"\\\"", "e" : "\\\\"  }`,
		`{"a":"q\" x" , "b":1}`,
		`{"a":"\\" , "b":" "}`,
		`{"a":["x y" , "\\\\\" " ] , "b" :{ "c" : "d e" }}`,
		`{"s":"a\\"}`,
		`{"a":"\\" ,"b":1}`,
		`{"a":"\\\\" ,"b":1}`,
		` {"a":1} `,
		"\n\t{\"a\":1}",
	} {
		out, _, err := rendering.Shape([]byte(in), rendering.ShapeOptions{})
		var want bytes.Buffer
		if cerr := json.Compact(&want, []byte(in)); cerr != nil {
			t.Fatalf("test input %s: %v", in, cerr)
		}
		if err != nil || !bytes.Equal(out, want.Bytes()) {
			t.Errorf("Shape(%s) = %s, %v, want %s", in, out, err, want.Bytes())
		}
	}
}

// TestShapeReturnsCompactInputUncopied: a compact object, whole or
// selected, comes back as a slice of the body, not a copy (the documented
// fast path), even when its strings hold spaces or escaped quotes.
func TestShapeReturnsCompactInputUncopied(t *testing.T) {
	for _, tc := range []struct {
		body, sel string
		at        int
	}{
		{`{"a":"x y","b":"q\" z","c":"\\","d":[1,{"e":""}]}`, "", 0},
		{`{"a":"\\\\"}`, "", 0},
		{`{"data":{"a":"x y"},"z":1}`, "data", 8},
		{`{"z":1,"data":{"a":"\" "}}`, "data", 14},
	} {
		body := []byte(tc.body)
		out, _, err := rendering.Shape(body, rendering.ShapeOptions{Select: tc.sel})
		if err != nil {
			t.Fatal(err)
		}
		if len(out) == 0 || &out[0] != &body[tc.at] {
			t.Errorf("Shape(%s, select %q) = %s copied, want a slice of the body at %d", tc.body, tc.sel, out, tc.at)
		}
	}
	// A selection gjson builds anew lies outside the body: it is copied,
	// and right, whatever the allocator put next to the body.
	for pad := 0; pad < 200; pad++ {
		body := []byte(`{"a":1,"b":[2, 3],"p":"` + strings.Repeat("x", pad) + `"}`)
		for sel, want := range map[string]string{"{a,b}": `{"a":1,"b":[2,3]}`, "[a,b]": `{"items":[1,[2,3]]}`, "{a}": `{"a":1}`} {
			out, _, err := rendering.Shape(body, rendering.ShapeOptions{Select: sel})
			if err != nil || string(out) != want {
				t.Fatalf("Shape(pad %d, select %s) = %s, %v, want %s", pad, sel, out, err, want)
			}
		}
	}
}

// TestShapeWrapAllocatesOnce: wrapping a compact array costs one
// allocation, sized right the first time.
func TestShapeWrapAllocatesOnce(t *testing.T) {
	body := []byte(`[1,2,3,"four"]`)
	allocs := testing.AllocsPerRun(10, func() {
		if _, _, err := rendering.Shape(body, rendering.ShapeOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 {
		t.Errorf("Shape(array) made %v allocations, want 1", allocs)
	}
}

func TestShapeWrapsAndLists(t *testing.T) {
	for _, tc := range []struct {
		body string
		o    rendering.ShapeOptions
		want string
	}{
		{`"s"`, rendering.ShapeOptions{List: "value"}, `{"value":"s"}`},
		{`[1, 2]`, rendering.ShapeOptions{}, `{"items":[1,2]}`},
		{`{"a":1,"b":2,"c":3}`, rendering.ShapeOptions{Fields: []rendering.Field{{Name: "x", Path: "a"}, {Name: "y", Path: "b"}, {Name: "z", Path: "c"}}}, `{"x":1,"y":2,"z":3}`},
	} {
		out, _, err := rendering.Shape([]byte(tc.body), tc.o)
		if err != nil || string(out) != tc.want {
			t.Errorf("Shape(%s, %+v) = %s, %v, want %s", tc.body, tc.o, out, err, tc.want)
		}
	}
	if _, _, err := rendering.Shape([]byte(`"s"`), rendering.ShapeOptions{List: "items"}); err == nil {
		t.Error(`Shape("s", list items) = nil error, want MissingError`)
	}
	if _, _, err := rendering.Shape([]byte(`{`), rendering.ShapeOptions{}); err != rendering.ErrNotJSON {
		t.Errorf("Shape({) = %v, want ErrNotJSON", err)
	}
}

// TestShapePaged: the cursor conventions for a paged Fields result.
func TestShapePaged(t *testing.T) {
	f := func(names ...string) []rendering.Field {
		var fs []rendering.Field
		for _, n := range names {
			fs = append(fs, rendering.Field{Name: n, Path: n, Optional: true})
		}
		return fs
	}
	for _, tc := range []struct {
		body   string
		fields []rendering.Field
		want   string
	}{
		{`{"items":[1],"nextCursor":"c2"}`, f("items", "nextCursor"), `{"items":[1],"nextCursor":"c2","hasMore":true}`},
		{`{"items":[1],"nextCursor":""}`, f("items", "nextCursor"), `{"items":[1],"hasMore":false}`},
		{`{"items":[1],"nextCursor":null}`, f("items", "nextCursor"), `{"items":[1],"hasMore":false}`},
		{`{"items":[1]}`, f("items", "nextCursor"), `{"items":[1],"hasMore":false}`},
		{`{"nextCursor":"c2"}`, f("nextCursor"), `{"nextCursor":"c2","hasMore":true}`},
		{`{}`, f("nextCursor"), `{"hasMore":false}`},
		{`{"items":null,"note":"","nextCursor":"c"}`, f("items", "note", "nextCursor"), `{"items":null,"note":"","nextCursor":"c","hasMore":true}`},
		{`{"items":[],"hasMore":false,"nextCursor":"c"}`, f("items", "hasMore", "nextCursor"), `{"items":[],"hasMore":false,"nextCursor":"c"}`},
	} {
		out, _, err := rendering.Shape([]byte(tc.body), rendering.ShapeOptions{Fields: tc.fields, Paged: true})
		if err != nil || string(out) != tc.want {
			t.Errorf("Shape(%s, paged) = %s, %v, want %s", tc.body, out, err, tc.want)
		}
	}
	// Not paged: a null or empty nextCursor stays, and no hasMore is added.
	out, _, _ := rendering.Shape([]byte(`{"nextCursor":"","hasMore":true}`), rendering.ShapeOptions{Fields: f("nextCursor")})
	if string(out) != `{"nextCursor":""}` {
		t.Errorf("unpaged = %s", out)
	}
}

func TestAppendString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f\u007f"`},
		{" ~", `" ~"`},
		{"<>&", `"<>&"`},
		{"\x80", "\"\uFFFD\""},
		{"a\xffb\xc3", "\"a\uFFFDb\uFFFD\""},
		{"é日😀", `"é日😀"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"\u2027\u202a", "\"\u2027\u202a\""},
	} {
		got := string(rendering.AppendString([]byte("x"), tc.in))
		if got != "x"+tc.want || !utf8.ValidString(got) {
			t.Errorf("AppendString(%q) = %s, want %s", tc.in, got[1:], tc.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got[1:]), &back); err != nil || (utf8.ValidString(tc.in) && back != tc.in) {
			t.Errorf("AppendString(%q) does not read back: %q, %v", tc.in, back, err)
		}
	}
}

func TestTextBody(t *testing.T) {
	long := strings.Repeat("a", 16<<10+1)
	for _, tc := range []struct {
		name   string
		raw    string
		total  int64
		inline int
		want   string
	}{
		{"whole", "abc", 3, 3, `{"text":"abc","truncated":false,"byteCount":3}`},
		{"one-over-inline", "abcd", 4, 3, `{"text":"abc","truncated":true,"byteCount":4}`},
		{"one-under-inline", "ab", 2, 3, `{"text":"ab","truncated":false,"byteCount":2}`},
		{"read-prefix-only", "abc", 10, 100, `{"text":"abc","truncated":true,"byteCount":10}`},
		{"total-below-read", "abc", 0, 100, `{"text":"abc","truncated":false,"byteCount":3}`},
		{"total-one-below-read", "abc", 2, 100, `{"text":"abc","truncated":false,"byteCount":3}`},
		{"zero-inline-is-16KiB", long, int64(len(long)), 0, `{"text":"` + long[:16<<10] + `","truncated":true,"byteCount":16385}`},
		{"negative-inline-is-16KiB", "abc", 3, -1, `{"text":"abc","truncated":false,"byteCount":3}`},
		{"cut-inside-4-byte", "a😀b", 6, 3, `{"text":"a","truncated":true,"byteCount":6}`},
		{"cut-after-4-byte", "a😀b", 6, 5, `{"text":"a😀","truncated":true,"byteCount":6}`},
		{"invalid-tail-kept-as-replacement", "a\xff\xff\xff\xffb", 6, 5, "{\"text\":\"a\uFFFD\",\"truncated\":true,\"byteCount\":6}"},
		{"cut-to-nothing", "😀", 4, 2, `{"text":"","truncated":true,"byteCount":4}`},
	} {
		if got := string(rendering.Text([]byte(tc.raw), tc.total, tc.inline)); got != tc.want {
			t.Errorf("%s: Text = %.120s, want %.120s", tc.name, got, tc.want)
		}
	}
}

func TestPayload(t *testing.T) {
	long := strings.Repeat("a", 16<<10+1)
	for _, tc := range []struct {
		name   string
		raw    string
		total  int64
		inline int
		want   string
	}{
		{"utf8", "héllo", 6, 100, `{"encoding":"utf8","content":"héllo","truncated":false,"byteCount":6}`},
		{"utf8-at-inline", "abc", 3, 3, `{"encoding":"utf8","content":"abc","truncated":false,"byteCount":3}`},
		{"utf8-over-inline", "abcd", 4, 3, `{"encoding":"utf8","content":"abc","truncated":true,"byteCount":4}`},
		{"utf8-cut-inside-char", "aé", 3, 2, `{"encoding":"utf8","content":"a","truncated":true,"byteCount":3}`},
		{"hex", "\x00\xff\x10", 3, 100, `{"encoding":"hex","content":"00FF10","truncated":false,"byteCount":3}`},
		{"hex-cut", "\xff\xfe\xfd", 3, 2, `{"encoding":"hex","content":"FFFE","truncated":true,"byteCount":3}`},
		{"prefix-read", "abc", 10, 100, `{"encoding":"utf8","content":"abc","truncated":true,"byteCount":10}`},
		{"total-below-read", "abc", 1, 100, `{"encoding":"utf8","content":"abc","truncated":false,"byteCount":3}`},
		{"total-one-below-read", "abc", 2, 100, `{"encoding":"utf8","content":"abc","truncated":false,"byteCount":3}`},
		{"zero-inline-is-16KiB", long, int64(len(long)), 0, `{"encoding":"utf8","content":"` + long[:16<<10] + `","truncated":true,"byteCount":16385}`},
		{"negative-inline-is-16KiB", "ab", 2, -1, `{"encoding":"utf8","content":"ab","truncated":false,"byteCount":2}`},
		// The read cap split the last character: still text.
		{"prefix-split-4-byte-by-1", "ab\xf0", 10, 100, `{"encoding":"utf8","content":"ab","truncated":true,"byteCount":10}`},
		{"prefix-split-4-byte-by-3", "ab\xf0\x9f\x98", 10, 100, `{"encoding":"utf8","content":"ab","truncated":true,"byteCount":10}`},
		// Read in full, the same bytes are not text.
		{"whole-with-broken-tail", "ab\xf0", 3, 100, `{"encoding":"hex","content":"6162F0","truncated":false,"byteCount":3}`},
		// Four bad bytes at the end are no split character.
		{"prefix-with-4-bad-bytes", "a\xff\xff\xff\xff", 10, 100, `{"encoding":"hex","content":"61FFFFFFFF","truncated":true,"byteCount":10}`},
		{"prefix-with-bad-byte-inside", "\xffab\xf0", 10, 100, `{"encoding":"hex","content":"FF6162F0","truncated":true,"byteCount":10}`},
		{"prefix-only-a-split-char", "\xf0\x9f", 10, 100, `{"encoding":"utf8","content":"","truncated":true,"byteCount":10}`},
		{"empty", "", 0, 10, `{"encoding":"utf8","content":"","truncated":false,"byteCount":0}`},
	} {
		got := string(rendering.Payload([]byte(tc.raw), tc.total, tc.inline))
		if got != tc.want {
			t.Errorf("%s: Payload = %.120s, want %.120s", tc.name, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: Payload is not JSON", tc.name)
		}
	}
}
