package openapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// mediaBase is a media type's type/subtype, lower case, without parameters.
func mediaBase(k string) string {
	base, _, _ := strings.Cut(strings.ToLower(k), ";")
	return strings.TrimSpace(base)
}

// isJSONMedia reports whether a media type is JSON by any of the names
// documents give it: application/json with parameters, text/json,
// structured-syntax suffixes (application/vnd.api+json, the wildcard
// application/*+json), and AWS's application/x-amz-json-1.0 and 1.1.
func isJSONMedia(k string) bool {
	_, sub, ok := strings.Cut(mediaBase(k), "/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json") || strings.HasPrefix(sub, "x-amz-json"))
}

const formType = "application/x-www-form-urlencoded"

// formMedia picks a URL-encoded form media type of content.
func formMedia(content openapi3.Content) (*openapi3.MediaType, string) {
	for _, k := range sortedKeys(content) {
		if mediaBase(k) == formType {
			return content[k], k
		}
	}
	return nil, ""
}

// textMedia lists the text media types of content: text/plain first,
// then the others in name order (text/csv, text/x-markdown, text/xml).
func textMedia(content openapi3.Content) []string {
	var out []string
	for _, plain := range []bool{true, false} {
		for _, k := range sortedKeys(content) {
			base := mediaBase(k)
			if content[k] != nil && strings.HasPrefix(base, "text/") && (base == "text/plain") == plain {
				out = append(out, k)
			}
		}
	}
	return out
}

// textBody maps a text request body (Orthanc's metadata values and log
// levels, Zuora's CSV file) to one string argument, body, sent as it is
// (body_format: text) with the document's media type: the first of
// kinds whose schema is a string. A text body that no kind describes as
// a string (an object declared as text/plain) is skipped, as the gateway
// would not know how to write it. An optional body's argument defaults
// to the empty string, which sends an empty body, when its schema lets
// it be empty; otherwise it is asked for.
func (im *importer) textBody(t *tool, as *arguments, method, path string, required bool, content openapi3.Content, kinds []string) bool {
	var arg map[string]any
	mime := ""
	for _, k := range kinds {
		if s, ok := textSchema(as.conv.schema(content[k].Schema, 0, nil)); ok {
			arg, mime = s, k
			break
		}
	}
	if arg == nil {
		im.skip(method, path, "request body is %q but its schema is not a string", bound(kinds[0], 80))
		return false
	}
	m, sendable := fixedMedia(mime)
	if mediaBase(m) != "text/plain" && !sendable {
		im.skip(method, path, "request body is %q, which cannot be sent as a fixed Content-Type", bound(mime, 80))
		return false
	}
	if as.taken["body"] {
		im.skip(method, path, "a parameter is called body")
		return false
	}
	// A text template sends its argument, or its default: an optional
	// body defaults to the empty string, or, when it cannot be empty (an
	// API key of 55 characters), is asked for.
	_, hasDefault := arg["default"]
	switch {
	case hasDefault:
	case required:
		as.required = append(as.required, "body")
	case emptyFits(arg):
		arg["default"] = ""
	default:
		as.required = append(as.required, "body")
		t.notes = append(t.notes, "the optional text body is asked for: it cannot be empty")
	}
	as.add(t, "body", "body", "", arg)
	t.body = "{body}"
	t.bodyFormat = "text"
	if mediaBase(m) != "text/plain" {
		// The argument is sent as UTF-8, which text/csv and text/xml
		// do not assume.
		if !strings.Contains(m, "charset=") {
			m += "; charset=utf-8"
		}
		t.headers["Content-Type"] = m
	}
	return true
}

// emptyFits reports whether the empty string is a value of the string
// schema s: no minimum length, pattern, enum or const that refuses it.
func emptyFits(s map[string]any) bool {
	if _, ok := s["minLength"]; ok { // set only when above 0
		return false
	}
	if c, ok := s["const"]; ok && c != "" {
		return false
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, any("")) {
		return false
	}
	_, pattern := s["pattern"]
	return !pattern
}

// textSchema is the argument schema of a text body whose schema s
// describes a string, or says nothing of its type: a string, with s's
// description and string constraints. False when s may describe
// anything else (an object, a list, a number, a choice among schemas,
// an enum or const that is not all strings).
func textSchema(s map[string]any) (map[string]any, bool) {
	switch typ := s["type"].(type) {
	case nil:
	case string:
		if typ != "string" {
			return nil, false
		}
	case []any:
		for _, x := range typ {
			if x != "string" && x != "null" {
				return nil, false
			}
		}
	default:
		return nil, false
	}
	for _, k := range []string{"properties", "items", "additionalProperties", "allOf", "anyOf", "oneOf", "not", "if", "prefixItems"} {
		if _, ok := s[k]; ok {
			return nil, false
		}
	}
	if c, ok := s["const"]; ok {
		if _, str := c.(string); !str {
			return nil, false
		}
	}
	if e, ok := s["enum"].([]any); ok && slices.ContainsFunc(e, func(v any) bool { _, str := v.(string); return !str }) {
		return nil, false
	}
	out := map[string]any{"type": "string"}
	for _, k := range []string{"description", "format", "pattern", "minLength", "maxLength", "enum", "const", "default", "examples"} {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	if d, ok := out["default"]; ok {
		if _, str := d.(string); !str {
			delete(out, "default")
		}
	}
	return out, true
}

// fixedMedia is mime as a fixed Content-Type header would carry it
// (lower case, trimmed), and whether it may be one (sendableMedia).
func fixedMedia(mime string) (string, bool) {
	m := strings.ToLower(strings.TrimSpace(mime))
	return m, sendableMedia.MatchString(m)
}

// sendableMedia is a concrete media type the catalog may carry as a fixed
// Content-Type header: no wildcard, nothing ${VAR} expansion would read
// (a fixed header value is configuration, and expands).
var sendableMedia = regexp.MustCompile(`^[a-z0-9][a-z0-9!#&^_.+-]*/[a-z0-9][a-z0-9!#&^_.+-]*(\s*;\s*[a-z0-9_.-]+=[a-z0-9_.-]+)*$`)

// bodyMedia finishes a request body of media type mime: a form becomes
// body_format: form with only the fields a form can carry, and a JSON
// media type other than application/json is sent as written (JSON:API,
// merge-patch and AWS's x-amz-json services refuse application/json). It
// returns the new required list, or why the operation cannot be imported.
func (im *importer) bodyMedia(t *tool, mime string, enc map[string]*openapi3.Encoding, props map[string]any, required []any) ([]any, string) {
	if isJSONMedia(mime) {
		if base := mediaBase(mime); base != "application/json" {
			if m, ok := fixedMedia(mime); ok {
				t.headers["Content-Type"] = m
			} else {
				t.notes = append(t.notes, fmt.Sprintf("request body is %q, sent as application/json", bound(mime, 80)))
			}
		}
		return required, ""
	}
	body, ok := t.body.(map[string]any)
	if !ok {
		return required, fmt.Sprintf("request body is %s but its schema is not an object with properties, which a form needs", bound(mime, 80))
	}
	t.bodyFormat = "form"
	for _, field := range sortedKeys(body) {
		a := strings.Trim(body[field].(string), "{}")
		// A field the document encodes as a deepObject (address[city]=
		// Paris, expand[]=a) is sent so: request.brackets, unless it is
		// a plain value or another field sits under its name.
		if deepField(enc, field) && props[a] != nil && !scalarSchema(props[a]) && !crosses(field, body) && !crosses(field, t.query) {
			if !slices.Contains(t.brackets, field) {
				t.brackets = append(t.brackets, field)
			}
			continue
		}
		if formValue(props[a]) {
			continue
		}
		if slices.Contains(required, any(a)) {
			return required, fmt.Sprintf("required form field %q is an object, which a URL-encoded form cannot carry", field)
		}
		delete(body, field)
		delete(props, a)
		t.notes = append(t.notes, fmt.Sprintf("form field %q left out: an object cannot be sent in a URL-encoded form", field))
	}
	if len(body) == 0 {
		return required, fmt.Sprintf("request body is %s and none of its fields can be sent in a form", bound(mime, 80))
	}
	return required, ""
}

// formValue reports whether a property schema describes what a form field
// carries: a scalar, or an array of scalars (the field repeated).
func formValue(s any) bool {
	m, _ := s.(map[string]any)
	if items, ok := m["items"]; ok {
		return scalarSchema(items)
	}
	return scalarSchema(m)
}

func scalarSchema(s any) bool {
	m, _ := s.(map[string]any)
	var types []any
	switch x := m["type"].(type) {
	case string:
		types = []any{x}
	case []any:
		types = x
	default:
		// Untyped: a composition or any value; only a plain value is taken.
		_, comp := m["properties"]
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if _, ok := m[k]; ok {
				comp = true
			}
		}
		return !comp
	}
	return !slices.Contains(types, any("object")) && !slices.Contains(types, any("array"))
}

// deepField reports whether a form's encoding sends field in the
// deepObject style.
func deepField(enc map[string]*openapi3.Encoding, field string) bool {
	e := enc[field]
	return e != nil && e.Style == openapi3.SerializationDeepObject
}
