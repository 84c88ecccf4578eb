package strictjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestScanRefusesWhatTwoParsersCouldReadApart(t *testing.T) {
	names := []string{"name", "arguments"}
	for _, tc := range []struct {
		name, obj string
		closed    bool
		want      ProblemKind
		key       string
	}{
		{"exact members", `{"name":"a","arguments":{}}`, true, 0, ""},
		{"a name twice", `{"name":"a","name":"b"}`, true, Duplicate, "name"},
		{"a name twice, once escaped", `{"name":"a","\u006eame":"b"}`, true, Duplicate, "name"},
		{"invalid UTF-8 twice reads as U+FFFD twice", "{\"\xff\":1,\"\\ufffd\":2}", false, Duplicate, "\ufffd"},
		{"an unknown name twice", `{"x":1,"x":2}`, false, Duplicate, "x"},
		{"another case", `{"Name":"b"}`, false, Misspelled, "Name"},
		{"another case beside the name", `{"name":"a","NAME":"b"}`, false, Misspelled, "NAME"},
		{"unknown in a closed object", `{"name":"a","extra":1}`, true, Unknown, "extra"},
		{"unknown in an open object", `{"name":"a","extra":1}`, false, 0, ""},
		{"nested duplicates are the member's business", `{"arguments":{"a":1,"a":2}}`, true, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := make([][]byte, len(names))
			p, _ := Scan([]byte(tc.obj), names, tc.closed, vals)
			switch {
			case tc.want == 0 && p != nil:
				t.Fatalf("Scan(%s) = %+v, want no problem", tc.obj, p)
			case tc.want != 0 && (p == nil || p.Kind != tc.want || string(p.Key) != tc.key):
				t.Fatalf("Scan(%s) = %+v, want kind %d on %q", tc.obj, p, tc.want, tc.key)
			}
		})
	}
}

func TestScanKeepsTheFirstValueAndReadsOnAfterAProblem(t *testing.T) {
	names := []string{"jsonrpc", "id"}
	vals := make([][]byte, len(names))
	p, dup := Scan([]byte(`{"bogus":1, "id" : 7 ,"id":8,"jsonrpc":"2.0"}`), names, true, vals)
	if p == nil || p.Kind != Unknown || string(p.Key) != "bogus" {
		t.Fatalf("first problem = %+v, want the unknown member", p)
	}
	if string(vals[1]) != "7" || string(vals[0]) != `"2.0"` {
		t.Fatalf("values = %q, want the first id and the version read past the problem", vals)
	}
	if dup != 1<<1 {
		t.Fatalf("dup = %b, want the id's bit", dup)
	}
}

// FuzzScan checks Scan against encoding/json's own reading of the same
// object: the same members, the same values, a duplicate exactly when
// encoding/json sees one name twice.
func FuzzScan(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":1,"a":2}`, `{"a":{"b":[1,"}",{"c":null}]},"b":"x\"y"}`,
		`{"\u0061":true,"a":false}`, "{\"\xff\":1,\"\\ufffd\":2}", ` { "k" : [ ] , "K" : { } } `, `{"a":"\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.TrimSpace(b)
		if !json.Valid(b) || len(b) == 0 || b[0] != '{' {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		var keys []string
		want := map[string]json.RawMessage{}
		dupWant := false
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			k := tok.(string)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if _, ok := want[k]; ok {
				dupWant = true
				continue
			}
			keys = append(keys, k)
			want[k] = v
		}
		vals := make([][]byte, len(keys))
		p, _ := Scan(b, keys, true, vals)
		if dupWant != (p != nil && p.Kind == Duplicate) {
			t.Fatalf("Scan(%q) = %+v; encoding/json sees a duplicate: %v", b, p, dupWant)
		}
		if p != nil && p.Kind != Duplicate {
			t.Fatalf("Scan(%q) = %+v with every member named", b, p)
		}
		for i, k := range keys {
			var got, exp bytes.Buffer
			if err := json.Compact(&got, vals[i]); err != nil {
				t.Fatalf("value of %q = %q, not JSON: %v", k, vals[i], err)
			}
			_ = json.Compact(&exp, want[k])
			if got.String() != exp.String() {
				t.Fatalf("value of %q = %s, encoding/json read %s", k, got.String(), exp.String())
			}
		}
		if len(keys) > 0 {
			if p, _ := Scan(b, nil, true, nil); p == nil || p.Kind == Misspelled {
				t.Fatalf("closed Scan(%q) with no names = %+v, want a problem", b, p)
			}
		}
	})
}
