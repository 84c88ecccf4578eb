package catalog

// overrides: change a tool by name without editing it, so hand edits
// survive a re-import that rewrites the tool's fragment. They apply after
// includes are merged and before defaults, so the changed tool is
// defaulted and validated like any other.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Override changes the tool named by its key under overrides:.
type Override struct {
	Meta        `yaml:"-"`
	Name        string   `yaml:"-"`
	Rename      string   `yaml:"rename"`
	Title       string   `yaml:"title"`
	Description string   `yaml:"description"`
	Tags        []string `yaml:"tags"`
	Gate        string   `yaml:"gate"`
	Enabled     bool     `yaml:"enabled"`
	Sensitive   bool     `yaml:"sensitive"`
	Requires    []string `yaml:"requires"`
	// Annotations replace the tool's annotations as a whole.
	Annotations *Annotations `yaml:"annotations"`
	// Arguments change the tool's arguments by name.
	Arguments map[string]*ArgumentOverride `yaml:"arguments"`
	// Probe replaces the tool's probe as a whole.
	Probe *ToolProbe `yaml:"probe"`
}

// ArgumentOverride changes one argument. Hide removes it from the input
// schema; its placeholders then take Value (or, failing that, Default)
// as a fixed literal. Without Hide, Default sets the argument's default
// (and makes it optional) and Schema narrows it.
type ArgumentOverride struct {
	Meta        `yaml:"-"`
	Name        string         `yaml:"-"`
	Hide        bool           `yaml:"hide"`
	Value       any            `yaml:"value"`
	Default     any            `yaml:"default"`
	Description string         `yaml:"description"`
	Schema      map[string]any `yaml:"schema"`
	// Rename gives the argument another name; its placeholders, required
	// entry and paging references follow.
	Rename string `yaml:"rename"`
}

// narrowing are the keywords an override's schema may add: each can only
// make fewer values valid.
var narrowing = []string{"const", "enum", "exclusiveMaximum", "exclusiveMinimum", "format", "maxItems", "maxLength", "maximum", "minItems", "minLength", "minimum", "multipleOf", "pattern"}

func applyOverrides(c *Catalog, p *problems, pos map[string]Pos) {
	if len(c.Overrides) == 0 {
		return
	}
	byName := map[string][]*Tool{}
	var names []string
	for _, t := range c.Tools {
		byName[t.Name] = append(byName[t.Name], t)
		names = append(names, t.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Overrides)) {
		o := c.Overrides[name]
		subj := fmt.Sprintf("overrides %q", name)
		at := first(o.Pos, pos[childKey("overrides", name)])
		tools := byName[name]
		if len(tools) == 0 {
			p.add(at, "%s: names no tool%s", subj, didYouMean(name, names))
			continue
		}
		for _, t := range tools {
			applyOverride(t, o, subj, p)
		}
	}
}

func applyOverride(t *Tool, o *Override, subj string, p *problems) {
	if o.Has("rename") {
		t.Name = o.Rename
	}
	if o.Has("title") {
		t.Title = o.Title
	}
	if o.Has("description") {
		t.Description = o.Description
	}
	if o.Has("tags") {
		t.Tags = o.Tags
	}
	if o.Has("gate") {
		t.Gate = o.Gate
		t.Keys["gate"] = o.At("gate")
	}
	if o.Has("enabled") {
		t.Enabled = o.Enabled
		t.Keys["enabled"] = o.At("enabled")
	}
	if o.Has("sensitive") {
		t.Sensitive = o.Sensitive
	}
	if o.Has("requires") {
		t.Requires = o.Requires
		t.Keys["requires"] = o.At("requires")
	}
	if o.Has("annotations") {
		t.Annotations = o.Annotations
	}
	if o.Has("probe") {
		t.Probe = o.Probe
	}
	for _, name := range slices.Sorted(maps.Keys(o.Arguments)) {
		a := o.Arguments[name]
		asubj := fmt.Sprintf("%s: argument %q", subj, name)
		props, _ := t.Input["properties"].(map[string]any)
		prop, ok := props[name].(map[string]any)
		if !ok {
			var have []string
			for k := range props {
				have = append(have, k)
			}
			p.add(a.Pos, "%s: the tool has no such argument%s", asubj, didYouMean(name, have))
			continue
		}
		prop = maps.Clone(prop)
		if a.Has("description") {
			prop["description"] = a.Description
		}
		for _, kw := range slices.Sorted(maps.Keys(a.Schema)) {
			if msg := narrow(prop, kw, a.Schema[kw]); msg != "" {
				p.add(a.At("schema"), "%s: schema %s", asubj, msg)
			}
		}
		if a.Hide {
			v, has := a.Value, a.Has("value")
			if !has {
				v, has = a.Default, a.Has("default")
			}
			if !has {
				p.add(a.At("hide"), "%s: a hidden argument needs a value (or default) to send in its place", asubj)
				continue
			}
			if s, _, errs := compileSchema(prop, "catalog:///override.json"); errs == nil {
				if err := s.Validate(jsonRoundTrip(v)); err != nil {
					p.add(first(a.At("value"), a.At("default")), "%s: value does not fit the argument's schema: %v", asubj, err)
					continue
				}
			}
			if msg := fixArgument(t, name, v); msg != "" {
				p.add(a.At("hide"), "%s: %s", asubj, msg)
				continue
			}
			delete(props, name)
			dropRequired(t, name)
			continue
		}
		if a.Has("value") {
			p.add(a.At("value"), "%s: value fixes a hidden argument; add hide: true (or use default)", asubj)
		}
		if a.Has("default") {
			prop["default"] = a.Default
			dropRequired(t, name)
		}
		props[name] = prop
		if a.Has("rename") && a.Rename != name {
			if _, taken := props[a.Rename]; taken {
				p.add(a.At("rename"), "%s: rename %q: the tool already has an argument of that name", asubj, a.Rename)
				continue
			}
			if !validArgName(a.Rename) {
				p.add(a.At("rename"), "%s: rename %q is not a valid argument name ([A-Za-z_][A-Za-z0-9_.-]*)", asubj, a.Rename)
				continue
			}
			renameArgument(t, name, a.Rename)
		}
	}
}

// renameArgument renames an argument in t's schema and templates.
func renameArgument(t *Tool, from, to string) {
	props, _ := t.Input["properties"].(map[string]any)
	props[to] = props[from]
	delete(props, from)
	if req, ok := t.Input["required"].([]any); ok {
		req = slices.Clone(req)
		for i, r := range req {
			if r == from {
				req[i] = to
			}
		}
		t.Input["required"] = req
	}
	if pg := t.Paging; pg != nil {
		if pg.PageSizeArgument == from {
			pg.PageSizeArgument = to
		}
		if pg.CursorArgument == from {
			pg.CursorArgument = to
		}
	}
	r := &t.Request
	for i, m := range r.MultiSegment {
		if m == from {
			r.MultiSegment[i] = to
		}
	}
	rewriteTemplates(r, func(name string) (string, bool) {
		if name == from {
			return "{" + to + "}", true
		}
		return "", false
	}, func(s string) (any, bool) {
		if s == "{"+from+"}" {
			return "{" + to + "}", true
		}
		return nil, false
	})
}

// rewriteTemplates rewrites each template of r: placeholder names for
// which part answers true become its text (already escaped), and body
// strings for which whole answers true become its value.
func rewriteTemplates(r *Request, part func(name string) (string, bool), whole func(s string) (any, bool)) {
	fix := func(s string) string {
		tpl, err := ParseTemplate(s)
		if err != nil {
			return s // reported when the tool is validated
		}
		var b strings.Builder
		changed := false
		for _, pt := range tpl.Parts {
			if pt.Name != "" {
				if text, ok := part(pt.Name); ok {
					b.WriteString(text)
					changed = true
					continue
				}
				b.WriteString("{" + pt.Name + "}")
				continue
			}
			b.WriteString(escapeBraces(pt.Text))
		}
		if !changed {
			return s
		}
		return b.String()
	}
	r.Path = fix(r.Path)
	for k, s := range r.Query {
		r.Query[k] = fix(s)
	}
	for k, s := range r.Headers {
		r.Headers[k] = fix(s)
	}
	var body func(x any) any
	body = func(x any) any {
		switch x := x.(type) {
		case string:
			if v, ok := whole(x); ok {
				return v
			}
			return fix(x)
		case map[string]any:
			for k, e := range x {
				x[k] = body(e)
			}
		case []any:
			for i, e := range x {
				x[i] = body(e)
			}
		}
		return x
	}
	r.Body = body(r.Body)
}

// narrow adds keyword kw with value v to a property schema, refusing
// anything that would widen it.
func narrow(prop map[string]any, kw string, v any) string {
	if !slices.Contains(narrowing, kw) {
		return fmt.Sprintf("keyword %q cannot narrow an argument (allowed: %s)", kw, strings.Join(narrowing, ", "))
	}
	old, had := prop[kw]
	if !had {
		prop[kw] = v
		return ""
	}
	num := func(x any) (float64, bool) {
		f, err := strconv.ParseFloat(fmt.Sprint(x), 64)
		return f, err == nil
	}
	switch kw {
	case "enum":
		olds, _ := old.([]any)
		news, ok := v.([]any)
		if !ok {
			return "enum must be a list"
		}
		for _, x := range news {
			if !slices.ContainsFunc(olds, func(o any) bool { return fmt.Sprint(o) == fmt.Sprint(x) }) {
				return fmt.Sprintf("enum value %v is not one of the argument's own values", x)
			}
		}
	case "minimum", "exclusiveMinimum", "minLength", "minItems":
		o, ok1 := num(old)
		n, ok2 := num(v)
		if !ok1 || !ok2 || n < o {
			return fmt.Sprintf("%s %v would widen %v", kw, v, old)
		}
	case "maximum", "exclusiveMaximum", "maxLength", "maxItems":
		o, ok1 := num(old)
		n, ok2 := num(v)
		if !ok1 || !ok2 || n > o {
			return fmt.Sprintf("%s %v would widen %v", kw, v, old)
		}
	default:
		if fmt.Sprint(old) != fmt.Sprint(v) {
			return fmt.Sprintf("%s is already %v", kw, old)
		}
	}
	prop[kw] = v
	return ""
}

func dropRequired(t *Tool, name string) {
	req, _ := t.Input["required"].([]any)
	req = slices.DeleteFunc(slices.Clone(req), func(r any) bool { return r == name })
	if len(req) == 0 {
		delete(t.Input, "required")
	} else {
		t.Input["required"] = req
	}
}

// fixArgument replaces every {name} placeholder in t's request templates
// with v: a body string that is exactly "{name}" becomes v itself, and
// any other template gets v's text (a scalar).
func fixArgument(t *Tool, name string, v any) string {
	if t.Paging != nil && (t.Paging.PageSizeArgument == name || t.Paging.CursorArgument == name) {
		return "a paging argument cannot be hidden"
	}
	text, scalar := "", true
	switch x := v.(type) {
	case string:
		text = x
	case nil:
		text = "null"
	case map[string]any, []any:
		scalar = false
	default:
		text = fmt.Sprint(x)
	}
	var bad string
	// In the path the value is what the argument would have sent: each
	// segment escaped, and refused if it would leave its segment.
	r := &t.Request
	multi := slices.Contains(r.MultiSegment, name)
	onlyPath := &Request{Path: r.Path}
	rewriteTemplates(onlyPath, func(n string) (string, bool) {
		if n != name {
			return "", false
		}
		if !scalar {
			bad = "a list or mapping value can only replace a whole body value"
			return "", false
		}
		seg, msg := fixedSegments(text, multi)
		if msg != "" {
			bad = msg
			return "", false
		}
		return escapeBraces(seg), true
	}, func(string) (any, bool) { return nil, false })
	if bad != "" {
		return bad
	}
	if onlyPath.Path != r.Path {
		r.Path = onlyPath.Path
		r.MultiSegment = slices.DeleteFunc(r.MultiSegment, func(m string) bool { return m == name })
	}
	rewriteTemplates(&t.Request, func(n string) (string, bool) {
		if n != name {
			return "", false
		}
		if !scalar {
			bad = "a list or mapping value can only replace a whole body value"
		}
		return escapeBraces(text), true
	}, func(s string) (any, bool) {
		if s == "{"+name+"}" {
			return v, true
		}
		return nil, false
	})
	return bad
}

// fixedSegments escapes a hidden argument's value for the request path,
// as one segment (or, for a multi_segment argument, one per "/"), and
// says why not when a segment, decoded any number of times as some
// servers do, is empty, "." or "..", or holds "/", a backslash, NUL, CR
// or LF (the rules proxy's checkSegment applies to argument values).
func fixedSegments(v string, multi bool) (string, string) {
	segs := []string{v}
	if multi {
		segs = strings.Split(v, "/")
	}
	for i, seg := range segs {
		for d, n := seg, 0; n < 8; n++ {
			dot, _, _ := strings.Cut(d, ";")
			if d == "" || dot == "." || dot == ".." || strings.ContainsAny(d, "/\\\x00\r\n") {
				return "", fmt.Sprintf("the value %q fills a path placeholder and must stay in its own segment (not empty, \".\" or \"..\", without \"/\" or a backslash, also once percent-decoded)", v)
			}
			next, err := url.PathUnescape(d)
			if err != nil || next == d {
				break
			}
			d = next
		}
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/"), ""
}

func escapeBraces(s string) string {
	return strings.NewReplacer("{", "{{", "}", "}}").Replace(s)
}

// jsonRoundTrip gives a decoded YAML value the shape encoding/json gives
// (what argument validation sees).
func jsonRoundTrip(v any) any {
	b, err := marshalJSON(v)
	if err != nil {
		return v
	}
	var out any
	if err := jsonUnmarshalNumber(b, &out); err != nil {
		return v
	}
	return out
}

func jsonUnmarshalNumber(b []byte, out *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(out)
}
