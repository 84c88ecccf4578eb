package catalog

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// sameAsEncodingJSON fails unless appendJSON writes v exactly as
// encoding/json does (marshalJSONSlow): a schema's JSON is what clients
// are shown and what the load's digests are taken of.
func sameAsEncodingJSON(t *testing.T, v any) {
	t.Helper()
	want, werr := marshalJSONSlow(v)
	got, ok := appendJSON(nil, v)
	if werr != nil {
		if ok {
			t.Fatalf("%#v: appendJSON wrote %s, encoding/json refuses it: %v", v, got, werr)
		}
		return
	}
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("%#v:\nappendJSON    %s (ok %v)\nencoding/json %s", v, got, ok, want)
	}
}

func TestAppendJSONWritesWhatEncodingJSONWrites(t *testing.T) {
	var all []byte
	for c := range 0x80 {
		all = append(all, byte(c))
	}
	for _, v := range []any{
		nil, true, false, "", "plain", string(all), "a < b & c > d", "\u2028\u2029", "\xff\xfe ok \xc3", "é ü 日本 🙂",
		0, -1, int64(math.MinInt64), uint64(math.MaxUint64), 1.5, -0.0, 1e-7, 1e21, 123456789.25, 1e-300, math.MaxFloat64, 0.000001,
		[]any{}, []any{1, "a", nil, []any{true}}, map[string]any{}, map[string]any{"b": 1, "a": map[string]any{"z": []any{}, "é": 2, "A": 3}},
	} {
		sameAsEncodingJSON(t, v)
	}
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"x": math.Inf(-1)}, []any{struct{}{}}, map[string]any{"f": func() {}}} {
		if _, ok := appendJSON(nil, v); ok {
			t.Errorf("appendJSON wrote %#v, which marshalJSON must leave to encoding/json", v)
		}
	}
	if _, err := marshalJSON(map[string]any{"x": math.NaN()}); err == nil {
		t.Error("marshalJSON encoded NaN")
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"description":"x < y\u2028","default":1.5e-7}}}`, `["\u0000\u007f",1e300,-0,null]`, `"\ud800"`} {
		f.Add([]byte(s), "", 0.0)
	}
	f.Add([]byte(`{}`), "\xed\xa0\x80 \x7f \b\f", 1e21)
	f.Fuzz(func(t *testing.T, doc []byte, s string, x float64) {
		var v any
		if json.Unmarshal(doc, &v) == nil {
			sameAsEncodingJSON(t, v)
		}
		sameAsEncodingJSON(t, s)
		sameAsEncodingJSON(t, x)
		sameAsEncodingJSON(t, map[string]any{s: []any{x, s}})
	})
}
