package proxy

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func decodeNumbers(in string) (any, bool) {
	var v any
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	return v, dec.Decode(&v) == nil
}

// A value spread over bracketed form fields: members in name order, a
// list of scalars as key[], other lists by index, nulls left out, and
// what lies deeper than maxBracketDepth as JSON text in its field.
func TestSpread(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxBracketDepth+1) + `1` + strings.Repeat(`}`, maxBracketDepth+1)
	for in, want := range map[string]url.Values{
		`{"b":1,"a":"x","n":null}`: {"k[a]": {"x"}, "k[b]": {"1"}},
		`["x",2,true]`:             {"k[]": {"x", "2", "true"}},
		`[[1,2],{"p":"q"}]`:        {"k[0][]": {"1", "2"}, "k[1][p]": {"q"}},
		`{"m":{},"l":[]}`:          {},
		`{"x=y&z":"w","é.ü":"v"}`:  {"k[x=y&z]": {"w"}, "k[é.ü]": {"v"}},
		deep:                       {"k" + strings.Repeat("[a]", maxBracketDepth): {`{"a":1}`}},
	} {
		v, ok := decodeNumbers(in)
		if !ok {
			t.Fatal(in)
		}
		sp := spreader{f: url.Values{}, bud: newBracketBudget()}
		if err := sp.add("k", v, 0); err != nil {
			t.Errorf("spread %s: %v", in, err)
		}
		if !reflect.DeepEqual(sp.f, want) {
			t.Errorf("spread %s = %v, want %v", in, sp.f, want)
		}
	}
}

// A member name that a form parser would read as another field (PHP cuts
// a name at a NUL, account[id\x00] becoming account_id), a bracket, an
// empty name (k[] appends to a list), or an argument whose long names
// repeated in every field would make a request far larger than itself
// (counted as encoded: a % is three bytes), is refused.
func TestSpreadRefuses(t *testing.T) {
	long := strings.Repeat("a", 20000)
	many := strings.Repeat("1,", 2000) + "1"
	for _, in := range []string{
		`{"id\u0000":"evil"}`,
		`{"a\nb":1}`,
		`{"a][b":1}`,
		`{"a[":1}`,
		`{"":1}`,
		`{"a":{"` + strings.Repeat("%", 712) + `":[` + strings.Repeat("1,", 361) + `1]}}`,
		`{"` + long + `":[` + many + `]}`,
		`[` + many + `]`,
	} {
		v, ok := decodeNumbers(in)
		if !ok {
			t.Fatal(in[:min(len(in), 40)])
		}
		sp := spreader{f: url.Values{}, bud: newBracketBudget()}
		if err := sp.add("k", v, 0); err == nil {
			t.Errorf("spread %.40s… was allowed: %d fields", in, len(sp.f))
		}
	}
}

// Whatever the argument, a spread either fails or sends every scalar of
// the value once, within its bounds, and every field's name is its root
// followed by brackets that hold no control character.
func FuzzSpread(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,{"c":null}]}}`, `[[[]]]`, `{"":""}`, `{"]":"[","a[b":1}`, `"x"`, `null`, `{"\u0000":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, ok := decodeNumbers(in)
		if !ok {
			return
		}
		sp := spreader{f: url.Values{}, bud: newBracketBudget()}
		if sp.add("k", v, 0) != nil {
			return
		}
		n, size := 0, 0
		for key, vals := range sp.f {
			if key != "k" && !strings.HasPrefix(key, "k[") || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("spread %s made field %q", in, key)
			}
			n += len(vals)
			for _, s := range vals {
				size += escapedLen(key) + escapedLen(s) + 2
			}
		}
		if want := scalars(v, 0); n != want {
			t.Fatalf("spread %s sent %d values, want %d", in, n, want)
		}
		if n > maxBracketFields || size > maxBracketBytes {
			t.Fatalf("spread %s: %d fields, %d bytes", in, n, size)
		}
	})
}

// scalars counts the values a spread sends for v: its non-null scalars,
// and what lies at maxBracketDepth as one.
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
