package rendering_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgw/gateway/rendering"
)

func TestShapeRequiredPaths(t *testing.T) {
	cases := []struct {
		name, body string
		o          rendering.ShapeOptions
		want       string // the shaped result, or the MissingError text
	}{
		{"select-missing", `{"dta":1}`, rendering.ShapeOptions{Select: "data"}, `response.select "data" matched nothing in the answer`},
		{"select-null-exists", `{"data":null}`, rendering.ShapeOptions{Select: "data"}, `{"value":null}`},
		{"select-optional", `{"dta":1}`, rendering.ShapeOptions{Select: "data", SelectOptional: true, List: "x"}, `{"value":null}`},
		{"field-missing", `{"a":1}`, rendering.ShapeOptions{Fields: []rendering.Field{{Name: "a", Path: "a"}, {Name: "b", Path: "x.b"}}}, `response.fields b ("x.b") matched nothing in the answer`},
		{"field-optional", `{"a":1}`, rendering.ShapeOptions{Fields: []rendering.Field{{Name: "a", Path: "a"}, {Name: "b", Path: "x.b", Optional: true}}}, `{"a":1}`},
		{"fields-under-optional-select", `{}`, rendering.ShapeOptions{Select: "d", SelectOptional: true, Fields: []rendering.Field{{Name: "a", Path: "a"}}}, `{}`},
		{"list-missing", `{"alarms":[]}`, rendering.ShapeOptions{List: "alerts"}, `response.list "alerts" matched nothing in the answer`},
		{"list-empty-exists", `{"alerts":[]}`, rendering.ShapeOptions{List: "alerts"}, `{"alerts":[]}`},
		{"list-of-wrapped-array", `[1]`, rendering.ShapeOptions{List: "items"}, `{"items":[1]}`},
		{"list-named-wrongly-for-an-array", `[1]`, rendering.ShapeOptions{List: "alerts"}, `response.list "alerts" matched nothing in the answer`},
		{"list-with-dots", `{"a.b":[]}`, rendering.ShapeOptions{List: "a.b"}, `{"a.b":[]}`},
		{"list-optional", `{}`, rendering.ShapeOptions{List: "alerts", ListOptional: true}, `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := rendering.Shape([]byte(tc.body), tc.o)
			var me *rendering.MissingError
			got := string(out)
			if errors.As(err, &me) {
				got = me.Error()
			} else if err != nil {
				t.Fatalf("Shape(%s) error %v", tc.body, err)
			}
			if got != tc.want {
				t.Errorf("Shape(%s, %+v) = %s, want %s", tc.body, tc.o, got, tc.want)
			}
		})
	}
}

func TestEmptyAndText(t *testing.T) {
	if got := string(rendering.Empty(204)); got != `{"ok":true,"upstreamStatus":204}` {
		t.Errorf("Empty(204) = %s", got)
	}
	for _, b := range []string{"", " ", "\r\n\t "} {
		if !rendering.IsEmpty([]byte(b)) {
			t.Errorf("IsEmpty(%q) = false", b)
		}
	}
	if rendering.IsEmpty([]byte(" {}")) {
		t.Error(`IsEmpty(" {}") = true`)
	}
	got := string(rendering.Text([]byte(strings.Repeat("é", 10)), 20, 5)) // the cut splits the third é
	if want := `{"text":"éé","truncated":true,"byteCount":20}`; got != want {
		t.Errorf("Text cut inside a character = %s, want %s", got, want)
	}
	got = string(rendering.Text([]byte("a\x00\xffb"), 4, 100))
	if want := `{"text":"a\u0000` + "\uFFFD" + `b","truncated":false,"byteCount":4}`; got != want || !utf8.ValidString(got) {
		t.Errorf("Text of control and invalid bytes = %s, want %s", got, want)
	}
}
