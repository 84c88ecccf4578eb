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

// textMedia picks a text media type of content: text/plain first, then
// the others in name order (text/csv, text/x-markdown, text/xml).
func textMedia(content openapi3.Content) (*openapi3.MediaType, string) {
	for _, plain := range []bool{true, false} {
		for _, k := range sortedKeys(content) {
			base := mediaBase(k)
			if content[k] != nil && strings.HasPrefix(base, "text/") && (base == "text/plain") == plain {
				return content[k], k
			}
		}
	}
	return nil, ""
}

// textBody maps a text request body (Orthanc's metadata values and log
// levels, Zuora's CSV file) to one string argument, body, sent as it is
// (body_format: text) with the document's media type. A text body
// whose schema is not a string (an object declared as text/plain) is
// skipped, as the gateway would not know how to write it.
func (im *importer) textBody(t *tool, as *arguments, method, path string, required bool, mt *openapi3.MediaType, mime string) bool {
	bs := as.conv.schema(mt.Schema, 0, nil)
	if typ, _ := bs["type"].(string); typ != "" && typ != "string" || bs["type"] != nil && typ == "" || bs["properties"] != nil || bs["items"] != nil {
		im.skip(method, path, "request body is %s but its schema is not a string", bound(mime, 80))
		return false
	}
	m := strings.ToLower(strings.TrimSpace(mime))
	if mediaBase(m) != "text/plain" && !sendableMedia.MatchString(m) {
		im.skip(method, path, "request body is %q, which cannot be sent as a fixed Content-Type", bound(mime, 80))
		return false
	}
	if as.taken["body"] {
		im.skip(method, path, "a parameter is called body")
		return false
	}
	bs["type"] = "string"
	as.add(t, "body", "body", "", bs)
	as.required = append(as.required, "body")
	t.body = "{body}"
	t.bodyFormat = "text"
	if !required {
		// A text template sends its argument; none to send is "".
		t.notes = append(t.notes, "the optional text body is asked for: an empty string sends it empty")
	}
	if mediaBase(m) != "text/plain" {
		t.headers["Content-Type"] = m
	}
	return true
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
			if m := strings.ToLower(strings.TrimSpace(mime)); sendableMedia.MatchString(m) {
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
