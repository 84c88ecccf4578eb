package proxy

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// A value spread over bracketed form fields: members in name order, a
// list of scalars as key[], other lists by index, nulls left out, and
// what lies deeper than maxBracketDepth as JSON text in its field.
func TestAddBracketed(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxBracketDepth+1) + `1` + strings.Repeat(`}`, maxBracketDepth+1)
	for in, want := range map[string]url.Values{
		`{"b":1,"a":"x","n":null}`: {"k[a]": {"x"}, "k[b]": {"1"}},
		`["x",2,true]`:             {"k[]": {"x", "2", "true"}},
		`[[1,2],{"p":"q"}]`:        {"k[0][]": {"1", "2"}, "k[1][p]": {"q"}},
		`{"m":{},"l":[]}`:          {},
		`{"a][b":"v","x=y&z":"w"}`: {"k[a][b]": {"v"}, "k[x=y&z]": {"w"}},
		deep:                       {"k" + strings.Repeat("[a]", maxBracketDepth): {`{"a":1}`}},
	} {
		var v any
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		f := url.Values{}
		addBracketed(f, "k", v, 0)
		if !reflect.DeepEqual(f, want) {
			t.Errorf("addBracketed(%s) = %v, want %v", in, f, want)
		}
		// The field's name is always the root: no member name can make
		// a field of another name.
		for key := range f {
			if !strings.HasPrefix(key, "k[") {
				t.Errorf("addBracketed(%s) made field %q", in, key)
			}
		}
	}
}

// Whatever the argument, every field addBracketed makes is under its
// root, and every scalar of the value is sent once.
func FuzzAddBracketed(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,{"c":null}]}}`, `[[[]]]`, `{"":""}`, `{"]":"[","a[b":1}`, `"x"`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			return
		}
		f := url.Values{}
		addBracketed(f, "k", v, 0)
		n := 0
		for key, vals := range f {
			if key != "k" && !strings.HasPrefix(key, "k[") {
				t.Fatalf("addBracketed(%s) made field %q", in, key)
			}
			n += len(vals)
		}
		if want := scalars(v, 0); n != want {
			t.Fatalf("addBracketed(%s) sent %d values, want %d", in, n, want)
		}
	})
}

// scalars counts the values addBracketed sends for v: its non-null
// scalars, and what lies at maxBracketDepth as one.
func scalars(v any, depth int) int {
	if v == nil {
		return 0
	}
	if depth >= maxBracketDepth {
		return 1
	}
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			n += scalars(e, depth+1)
		}
	case []any:
		for _, e := range x {
			n += scalars(e, depth+1)
		}
	default:
		n = 1
	}
	return n
}
