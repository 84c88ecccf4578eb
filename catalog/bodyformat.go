package catalog

import (
	"maps"
	"slices"
)

// bodyFormat checks request.body_format against the body's shape. A
// form body is a mapping whose values are strings (templates),
// numbers, booleans or lists of them: each key becomes a form field, a
// list repeats it. A text body is one string template, sent as it
// expands; its placeholders must always have a value, so each names a
// required argument or one with a default.
func (tc *toolCheck) bodyFormat(r *Request, base string) {
	p := first(r.At("body_format"), r.At("body"))
	form, _ := r.Body.(map[string]any)
	if r.BodyFormat != BodyForm {
		form = nil
	}
	// Every field name the request sends in its query and form.
	keys := slices.Sorted(maps.Keys(r.Query))
	keys = append(keys, sortedKeys(form)...)
	for i, name := range r.Brackets {
		at := first(tc.pos[childIndex(base+".brackets", i)], r.At("brackets"))
		_, inQuery := r.Query[name]
		_, inForm := form[name]
		switch {
		case slices.Contains(r.Brackets[:i], name):
			tc.add(at, tc.subj, "request.brackets: %q is listed twice", name)
		case !inQuery && !inForm:
			tc.add(at, tc.subj, "request.brackets: %q is no query parameter or form field of this request", name)
		case slices.ContainsFunc(keys, func(k string) bool { return FieldUnder(k, name) || FieldUnder(name, k) }):
			// filter beside filter[org], in the query or the form, either
			// way round: a spread could set the other field again (a
			// fixed value, or the workspace).
			tc.add(at, tc.subj, "request.brackets: %q and another field of this request are one under the other; a spread argument could set it again", name)
		}
	}
	// The workspace binding replaces every field under its name
	// (tenant[x]): one written here would never be sent.
	if u := tc.c.Upstreams[r.Upstream]; u != nil && u.Workspace != nil && u.Workspace.Query != "" {
		for _, k := range keys {
			if FieldUnder(k, u.Workspace.Query) {
				tc.add(r.At("query"), tc.subj, "field %q is under the workspace binding's query parameter %q, which replaces it", k, u.Workspace.Query)
			}
		}
	}
	switch r.BodyFormat {
	case BodyJSON:
		return
	case BodyForm, BodyText:
	default:
		tc.add(r.At("body_format"), tc.subj, "request.body_format %q must be json, form or text", r.BodyFormat)
		return
	}
	if r.Body == nil {
		tc.add(p, tc.subj, "request.body_format %s needs a request.body", r.BodyFormat)
		return
	}
	path := base + ".body"
	if r.BodyFormat == BodyText {
		t, ok := r.BodyTemplate.(Template)
		if !ok {
			tc.add(r.At("body"), tc.subj, "request.body_format text needs request.body to be one string template, got %s", shapeOf(r.Body))
			return
		}
		for _, n := range t.Names() {
			if n != ReservedWorkspace && n != ReservedActor && tc.props[n] && !tc.req[n] && !tc.hasDefault(n) {
				tc.add(r.At("body"), tc.subj, "text body placeholder {%s} names an optional argument without a default; list it under input.required or give it a default", n)
			}
		}
		for _, tr := range t.Times() {
			if tr.Arg != "" && tc.props[tr.Arg] && !tc.req[tr.Arg] && !tc.hasDefault(tr.Arg) {
				tc.add(r.At("body"), tc.subj, "text body placeholder {%s} names an optional argument %q without a default; list it under input.required or give it a default", tr.Name, tr.Arg)
			}
		}
		return
	}
	m, ok := r.Body.(map[string]any)
	if !ok {
		tc.add(r.At("body"), tc.subj, "request.body_format form needs request.body to be a mapping of field names to values, got %s", shapeOf(r.Body))
		return
	}
	for _, k := range sortedKeys(m) {
		kp := childKey(path, k)
		if k == "" {
			tc.add(first(tc.pos[kp], r.At("body")), tc.subj, "request.body: form field names must not be empty")
		}
		switch x := m[k].(type) {
		case []any:
			for i, e := range x {
				if !formScalar(e) {
					tc.add(first(tc.pos[childIndex(kp, i)], tc.pos[kp], r.At("body")), tc.subj,
						"request.body %s[%d]: a form field's list holds strings, numbers or booleans, not %s", k, i, shapeOf(e))
				}
			}
		default:
			if !formScalar(x) {
				tc.add(first(tc.pos[kp], r.At("body")), tc.subj,
					"request.body %s: a form field is a string, number, boolean or a list of them, not %s", k, shapeOf(x))
			}
		}
	}
}

func (tc *toolCheck) hasDefault(name string) bool {
	_, ok := tc.t.Defaults[name]
	return ok
}

func formScalar(x any) bool {
	switch x.(type) {
	case map[string]any, []any, nil:
		return false
	}
	return true
}

// shapeOf names a decoded value's shape for messages.
func shapeOf(x any) string {
	switch x.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case nil:
		return "null"
	case string:
		return "a string"
	}
	return "a scalar"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// FieldUnder reports whether the query or form field k is a bracketed
// field under name (name[x], name[x][y]), which PHP and Rails read into
// name.
func FieldUnder(k, name string) bool {
	return len(k) > len(name) && k[len(name)] == '[' && k[:len(name)] == name
}
