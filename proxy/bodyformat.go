package proxy

import (
	"encoding/json"
	"fmt"
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
func (u *upstream) buildBodyBytes(req catalog.Request, args map[string]any, b binding, bud *bracketBudget) ([]byte, string, error) {
	if req.BodyTemplate == nil {
		return nil, "", nil
	}
	switch req.BodyFormat {
	case catalog.BodyForm:
		tmpl, _ := req.BodyTemplate.(map[string]any)
		f, err := buildForm(tmpl, args, b, req.Brackets, bud)
		if err != nil {
			return nil, "", err
		}
		// The workspace binding wins here too: many servers merge the form
		// with the query string (Go's Request.FormValue prefers the form),
		// so a field named like the binding's parameter must hold the
		// token's workspace, never an argument's value.
		if w := u.def.Workspace; w != nil && w.Query != "" && dropField(f, w.Query) {
			f.Set(w.Query, b.workspace)
		}
		if err := fieldCount(f, "form fields"); err != nil {
			return nil, "", err
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
// is spread over bracketed fields instead (spread). An absent or null
// argument drops its value.
func buildForm(tmpl map[string]any, args map[string]any, b binding, brackets []string, bud *bracketBudget) (url.Values, error) {
	f := url.Values{}
	for k, e := range tmpl {
		if list, ok := e.([]any); ok {
			for _, x := range list {
				addFormValue(f, k, x, args, b)
			}
			continue
		}
		if t, ok := e.(catalog.Template); ok && slices.Contains(brackets, k) {
			if spread, err := spreadArgument(f, k, t, args, b, bud); spread || err != nil {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		addFormValue(f, k, e, args, b)
	}
	return f, nil
}

func addFormValue(f url.Values, key string, e any, args map[string]any, b binding) {
	t, ok := e.(catalog.Template)
	if !ok {
		if s, ok := scalarString(e); ok {
			f.Add(key, s)
		}
		return
	}
	if name, whole := t.Whole(); whole {
		if _, reserved := b.reserved(name); !reserved {
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

// spreadArgument spreads the argument of a whole "{arg}" template t, when
// it is an object or a list, over bracketed fields of f under key, and
// reports whether it did; the error is the caller's, for an argument that
// would pass the request's budget or names a member no form can carry.
func spreadArgument(f url.Values, key string, t catalog.Template, args map[string]any, b binding, bud *bracketBudget) (bool, error) {
	name, whole := t.Whole()
	if !whole {
		return false, nil
	}
	if _, reserved := b.reserved(name); reserved {
		return false, nil
	}
	switch v := args[name].(type) {
	case map[string]any, []any:
		sp := spreader{f: f, bud: bud}
		if err := sp.add(key, v, 0); err != nil {
			return false, argErrorf("argument %q: %v", name, err)
		}
		return true, nil
	}
	return false, nil
}

// bracketBudget is what the spread arguments of one request may still
// send: a member's name is repeated in every field under it, so a short
// argument with long names could otherwise make a request many times its
// size, and a wide one push the fields after it past what a server reads
// (PHP and qs read 1,000).
type bracketBudget struct{ bytes, fields int }

func newBracketBudget() *bracketBudget {
	return &bracketBudget{bytes: maxBracketBytes, fields: maxBracketFields}
}

// maxFields bounds the pairs of a request's query and of its form. PHP
// (max_input_vars) and qs (parameterLimit) read the first 1,000 and drop
// the rest, which could be the workspace binding: a wide list argument
// must not push it out of what the upstream reads.
const maxFields = 900

// fieldCount refuses, as the caller's error, a query or form of more
// than maxFields pairs.
func fieldCount(v url.Values, what string) error {
	n := 0
	for _, vals := range v {
		n += len(vals)
	}
	if n > maxFields {
		return argErrorf("the arguments make %d %s, more than the %d an upstream is sent", n, what, maxFields)
	}
	return nil
}

// dropField removes the field name from v, and every bracketed field
// under it (tenant[x], which PHP and Rails read into tenant), reporting
// whether there was one.
func dropField(v url.Values, name string) bool {
	found := false
	for k := range v {
		if k == name || catalog.FieldUnder(k, name) {
			delete(v, k)
			found = true
		}
	}
	return found
}

// Bounds on the spread arguments of one request (bracketBudget).
const (
	// maxBracketDepth bounds how deep a value is spread; what lies deeper
	// is sent as JSON text in its field.
	maxBracketDepth = 16
	// maxBracketFields bounds the fields a request's arguments spread
	// over, well under the 1,000 that PHP and qs read.
	maxBracketFields = 500
	// maxBracketBytes bounds the encoded field names and values they
	// spread over.
	maxBracketBytes = 256 << 10
)

// spreader spreads one value over bracketed form fields, as Stripe, Rails
// and PHP read them: an object's members as key[name] (in name order), a
// list of scalars as key[] repeated, any other list's items as key[0],
// key[1]. A null is left out. A member name must hold no control
// character and no bracket: PHP cuts a name at a NUL and reads what is
// left as another field (account[id\x00] as account_id).
type spreader struct {
	f   url.Values
	bud *bracketBudget
}

func (sp *spreader) add(key string, v any, depth int) error {
	if depth >= maxBracketDepth {
		if s, ok := scalarString(v); ok {
			return sp.field(key, s)
		}
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '[' || r == ']' }) {
				return fmt.Errorf("member name %q cannot be sent in a bracketed field (it must not be empty or hold control characters or brackets)", shorten(k))
			}
			if err := sp.add(key+"["+k+"]", x[k], depth+1); err != nil {
				return err
			}
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
			k := key + "[]"
			if !scalars {
				k = key + "[" + strconv.Itoa(i) + "]"
			}
			if err := sp.add(k, e, depth+1); err != nil {
				return err
			}
		}
	default:
		if s, ok := scalarString(x); ok {
			return sp.field(key, s)
		}
	}
	return nil
}

func (sp *spreader) field(key, value string) error {
	sp.bud.bytes -= escapedLen(key) + escapedLen(value) + 2
	sp.bud.fields--
	if sp.bud.bytes < 0 || sp.bud.fields < 0 {
		return fmt.Errorf("the request's arguments spread over more than %d bracketed fields or %d KiB", maxBracketFields, maxBracketBytes>>10)
	}
	sp.f.Add(key, value)
	return nil
}

// escapedLen is the length of s as url.QueryEscape writes it.
func escapedLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~', c == ' ':
			n++
		default:
			n += 3
		}
	}
	return n
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
