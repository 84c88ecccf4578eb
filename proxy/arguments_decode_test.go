package proxy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// decodeWithEncodingJSON is the reference: the arguments as encoding/json
// with UseNumber reads them, before the number check.
func decodeWithEncodingJSON(raw []byte) (map[string]any, bool) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return map[string]any{}, true
	}
	if !json.Valid(raw) {
		return nil, false
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

var argSeeds = []string{
	`{}`, ` { } `, `null`, ` null `, ``, `[1]`, `"s"`, `1`, `{} {}`, `{"a":1}x`,
	`{"id":"k9"}`, `{"a":"x","a":"y"}`, `{"a":{"b":1,"b":[true,false,null]}}`,
	`{"s":"\u00e9\ud83d\ude00\n\"\\\/\b\f\r\t"}`, `{"s":"\ud800"}`, `{"s":"caf` + "\xc3\xa9" + `"}`,
	`{"s":"bad ` + "\xff\xfe" + `"}`, `{"k\u0041y":"v"}`, `{"n":-0.0e+10,"m":[1,2.5,1E3]}`,
	`{"e":[],"o":{},"deep":[[[{"x":[{}]}]]]}`, "{\"ws\" :\t\"x\"\r\n}", `{"x":1e999999}`,
}

func TestDecodeArgsReadsWhatEncodingJSONReads(t *testing.T) {
	for _, s := range argSeeds {
		t.Run(s, func(t *testing.T) { compareDecoders(t, []byte(s)) })
	}
}

func FuzzDecodeArgsMatchesEncodingJSON(f *testing.F) {
	for _, s := range argSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(compareDecoders)
}

// refusesALiteral reports whether a number literal anywhere in raw (valid
// JSON) is one canonicalNumber refuses, including one in a member a later
// duplicate replaces: decodeArgs checks every number as it reads it, so
// {"a":{"x":1e999,"x":1}} is refused though encoding/json keeps only the
// 1 (a reader that takes the first duplicate would see 1e999).
func refusesALiteral(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			if _, msg := canonicalNumber(string(n)); msg != "" {
				return true
			}
		}
	}
}

// compareDecoders: decodeArgs accepts exactly what the reference reads as
// an object, and gives the same values, numbers canonicalised the same;
// it refuses exactly the objects holding a number literal that the number
// check refuses.
func compareDecoders(t *testing.T, raw []byte) {
	want, ok := decodeWithEncodingJSON(raw)
	got, err := decodeArgs(raw)
	if !ok {
		if err == nil {
			t.Fatalf("decodeArgs(%q) = %v, want an error (encoding/json reads no object)", raw, got)
		}
		return
	}
	werr := canonicalNumbers(want)
	if werr != nil && err == nil {
		t.Fatalf("decodeArgs(%q) accepted, reference number check %v", raw, werr)
	}
	if refused := refusesALiteral(raw); (err != nil) != refused {
		t.Fatalf("decodeArgs(%q): error %v; a literal refused by the number check: %v (reference reading %v)", raw, err, refused, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeArgs(%q) = %#v, encoding/json reads %#v", raw, got, want)
	}
}

// BenchmarkDecodeArgs compares, in one run, decodeArgs with the
// encoding/json reading it stands for, on arguments of a common shape.
func BenchmarkDecodeArgs(b *testing.B) {
	raw := []byte(`{"id":"job-42","state":"failed","limit":20,"tags":["region=eu","tier=gold"],"note":"retry after the outage"}`)
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeArgs(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, _ := decodeWithEncodingJSON(raw)
			if err := canonicalNumbers(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
