package proxy

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgw/gateway/catalog"
)

// Content types of the request body formats.
const (
	contentJSON = "application/json"
	contentForm = "application/x-www-form-urlencoded"
	contentText = "text/plain; charset=utf-8"
)

// buildBodyBytes encodes a request's body in its body_format;
// nil when the request has none.
func (u *upstream) buildBodyBytes(req catalog.Request, args map[string]any, b binding) ([]byte, string, error) {
	if req.BodyTemplate == nil {
		return nil, "", nil
	}
	switch req.BodyFormat {
	case catalog.BodyForm:
		tmpl, _ := req.BodyTemplate.(map[string]any)
		f := buildForm(tmpl, args, b, req.Brackets)
		// The workspace binding wins here too: many servers merge the form
		// with the query string (Go's Request.FormValue prefers the form),
		// so a field named like the binding's parameter must hold the
		// token's workspace, never an argument's value.
		if w := u.def.Workspace; w != nil && w.Query != "" && dropField(f, w.Query) {
			f.Set(w.Query, b.workspace)
		}
		return []byte(f.Encode()), contentForm, nil
	case catalog.BodyText:
		t, _ := req.BodyTemplate.(catalog.Template)
		s, ok := expandText(t, args, b)
		if !ok {
			return nil, "", argErrorf("argument %q is required: the request body needs it", absentArgument(t, args, b))
		}
		return []byte(s), contentText, nil
	}
	// The body itself is sent even when absent arguments empty it.
	v, _ := buildBody(req.BodyTemplate, args, b)
	body, err := json.Marshal(v)
	if err != nil {
		return nil, "", argErrorf("arguments cannot be encoded as JSON: %v", err)
	}
	return body, contentJSON, nil
}

// buildForm expands a form body: each key's value is a template or a
// literal, or a list of them, which repeats the key. A template that is
// exactly "{arg}" with an array value repeats the key too, as in a query;
// in a field the request lists under brackets an object or list argument
// is spread over bracketed fields instead (addBracketed). An absent or
// null argument drops its value.
func buildForm(tmpl map[string]any, args map[string]any, b binding, brackets []string) url.Values {
	f := url.Values{}
	for k, e := range tmpl {
		if list, ok := e.([]any); ok {
			for _, x := range list {
				addFormValue(f, k, x, args, b, false)
			}
			continue
		}
		addFormValue(f, k, e, args, b, slices.Contains(brackets, k))
	}
	return f
}

// addFormValue adds e's value to f under key: a literal, a template's
// text, a whole "{arg}" list repeated, or with brackets a whole "{arg}"
// object or list spread over bracketed fields. It serves the query as
// well as a form body.
func addFormValue(f url.Values, key string, e any, args map[string]any, b binding, brackets bool) {
	t, ok := e.(catalog.Template)
	if !ok {
		if s, ok := scalarString(e); ok {
			f.Add(key, s)
		}
		return
	}
	if name, whole := t.Whole(); whole {
		if _, reserved := b.reserved(name); !reserved {
			switch v := args[name].(type) {
			case map[string]any, []any:
				if brackets {
					addBracketed(f, key, v, 0)
					return
				}
			}
			if list, ok := args[name].([]any); ok {
				for _, x := range list {
					if s, ok := scalarString(x); ok {
						f.Add(key, s)
					}
				}
				return
			}
		}
	}
	if s, ok := expandText(t, args, b); ok {
		f.Add(key, s)
	}
}

// dropField removes the field name from v, and every bracketed field
// under it (tenant[x], which PHP and Rails read as tenant), reporting
// whether there was one.
func dropField(v url.Values, name string) bool {
	found := false
	for k := range v {
		if k == name || strings.HasPrefix(k, name+"[") {
			delete(v, k)
			found = true
		}
	}
	return found
}

// maxBracketDepth bounds how deep addBracketed spreads a value; what lies
// deeper is sent as JSON text in its field.
const maxBracketDepth = 16

// addBracketed spreads v over bracketed form fields, as Stripe, Rails and
// PHP read them: an object's members as key[name] (in name order), a
// list of scalars as key[] repeated, any other list's items as key[0],
// key[1]. A null is left out.
func addBracketed(f url.Values, key string, v any, depth int) {
	if depth >= maxBracketDepth {
		if s, ok := scalarString(v); ok {
			f.Add(key, s)
		}
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			addBracketed(f, key+"["+k+"]", x[k], depth+1)
		}
	case []any:
		scalars := !slices.ContainsFunc(x, func(e any) bool {
			switch e.(type) {
			case map[string]any, []any:
				return true
			}
			return false
		})
		for i, e := range x {
			if scalars {
				addBracketed(f, key+"[]", e, depth+1)
			} else {
				addBracketed(f, key+"["+strconv.Itoa(i)+"]", e, depth+1)
			}
		}
	default:
		if s, ok := scalarString(x); ok {
			f.Add(key, s)
		}
	}
}

// absentArgument names the first argument of t without a value, for the
// message; a computed time names its duration argument.
func absentArgument(t catalog.Template, args map[string]any, b binding) string {
	for _, p := range t.Parts {
		if p.Name == "" {
			continue
		}
		if _, reserved := b.reserved(p.Name); reserved {
			continue
		}
		if _, ok := scalarString(args[p.Name]); !ok {
			if p.Time != nil {
				return p.Time.Arg
			}
			return p.Name
		}
	}
	return ""
}
