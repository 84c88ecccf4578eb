package rendering_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpgw/gateway/rendering"
)

var compactSeeds = []string{
	`{"a":1}`,
	"{ \"a\" : [ 1 , 2 ,\n 3 ] ,\t\"b\" : \"x y\\\" z\" }",
	`  [ "spaces inside strings stay", {"k":" v "} ]  `,
	`{"esc":"quote \" and backslash \\ then space"}`,
	`"just a string"`,
	`null`,
}

// FuzzShapeCompacts: Shape's output is the input compacted exactly as
// encoding/json compacts it (for an object; other values are wrapped).
func FuzzShapeCompacts(f *testing.F) {
	for _, s := range compactSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		out, _, err := rendering.Shape([]byte(in), rendering.ShapeOptions{})
		var unreadable *rendering.UnreadableError
		if errors.As(err, &unreadable) {
			// Valid JSON a client cannot decode (too deep, a number past
			// float64) is refused on purpose, and only that.
			if rendering.Readable([]byte(in)) == nil {
				t.Fatalf("Shape(%q) refused a body Readable accepts: %v", in, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Shape(%q): %v", in, err)
		}
		if !json.Valid(out) {
			t.Fatalf("Shape(%q) = %q, not JSON", in, out)
		}
		var want bytes.Buffer
		json.Compact(&want, []byte(in))
		if bytes.HasPrefix(bytes.TrimSpace([]byte(in)), []byte("{")) && !bytes.Equal(out, want.Bytes()) && json.Valid(want.Bytes()) {
			// Invalid UTF-8 is replaced by Shape; compare only valid input.
			if bytes.Equal([]byte(string([]rune(string(want.Bytes())))), want.Bytes()) {
				t.Fatalf("Shape(%q) = %q, want %q", in, out, want.Bytes())
			}
		}
	})
}
