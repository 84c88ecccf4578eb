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
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Override changes the tool named by its key under overrides:.
type Override struct {
	Meta        `yaml:"-"`
	Name        string   `yaml:"-"`
	Rename      string   `yaml:"rename"`
	Title       string   `yaml:"title"`
	Description string   `yaml:"description"`
	Tags        []string `yaml:"tags"`
	SearchHint  string   `yaml:"search_hint"`
	// Kind makes the tool a read or a write; a write needs a gate other
	// than view, as any write does.
	Kind      string   `yaml:"kind"`
	Gate      string   `yaml:"gate"`
	Enabled   bool     `yaml:"enabled"`
	Sensitive bool     `yaml:"sensitive"`
	Requires  []string `yaml:"requires"`
	// Annotations replace the tool's annotations as a whole.
	Annotations *Annotations `yaml:"annotations"`
	// Approval replaces the tool's approval; written as "none", it
	// removes it.
	Approval *Approval `yaml:"approval"`
	// OutputSchema replaces, trims or removes the tool's output_schema.
	OutputSchema *OutputOverride `yaml:"output_schema"`
	// Arguments change the tool's arguments by name.
	Arguments map[string]*ArgumentOverride `yaml:"arguments"`
	// Probe replaces the tool's probe as a whole.
	Probe *ToolProbe `yaml:"probe"`
}

// OutputOverride changes a tool's output_schema. Written as "none", None
// is set and the tool advertises no output schema; as {keep: [...]}, Keep
// lists the properties the schema keeps ("a.b" keeps b of the object, or
// of each item of the array, a); as any other mapping, Schema replaces the
// tool's schema.
type OutputOverride struct {
	Meta   `yaml:"-"`
	None   bool           `yaml:"-"`
	Keep   []string       `yaml:"keep"`
	Schema map[string]any `yaml:"-"`
}

var outputOverrideType = reflect.TypeFor[OutputOverride]()

// decodeOutputOverride decodes output_schema under an override: none,
// {keep: [...]}, or a schema.
func (d *decoder) decodeOutputOverride(n *yaml.Node, v reflect.Value, path string, depth int) {
	const want = "none, {keep: [PROPERTY, ...]}, or a JSON Schema that replaces the tool's"
	o := v.Addr().Interface().(*OutputOverride)
	o.Meta = Meta{Pos: nodePos(n), Keys: map[string]Pos{}}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value != WorkspaceNone {
			d.p.add(nodePos(n), "%s: want %s, got %s", d.where(path), want, d.describe(n))
			return
		}
		o.None = true
	case yaml.MappingNode:
		var keep *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "keep" {
				keep = n.Content[i+1]
			}
		}
		if keep == nil {
			if x, ok := d.generic(n, path, depth); ok {
				o.Schema, _ = x.(map[string]any)
			}
			return
		}
		if len(n.Content) > 2 {
			d.p.add(nodePos(n), "%s: keep trims the tool's own schema and stands alone; to replace the schema, write one without keep", d.where(path))
			return
		}
		o.Keys["keep"] = nodePos(keep)
		d.decode(keep, reflect.ValueOf(&o.Keep).Elem(), childKey(path, "keep"), depth+1)
		if o.Keep == nil && !d.tooBig {
			o.Keep = []string{}
		}
	default:
		d.mismatch(n, path, want)
	}
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
	byName := map[string][]int{}
	var names []string
	for i, t := range c.Tools {
		byName[t.Name] = append(byName[t.Name], i)
		names = append(names, t.Name)
	}
	moves := map[string][]string{} // an override's field → the tools' fields it replaced
	for _, name := range slices.Sorted(maps.Keys(c.Overrides)) {
		o := c.Overrides[name]
		subj := fmt.Sprintf("overrides %q", name)
		at := first(o.Pos, pos[childKey("overrides", name)])
		tools := byName[name]
		if len(tools) == 0 {
			p.add(at, "%s: names no tool%s", subj, didYouMean(name, names))
			continue
		}
		for _, i := range tools {
			applyOverride(c.Tools[i], o, subj, p)
			// Values the override replaces are reported where the
			// override wrote them, not where the tool first had them.
			for _, key := range []string{"requires", "output_schema", "tags"} {
				if o.Has(key) && (key != "output_schema" || o.OutputSchema.Schema != nil) {
					from := childKey(childKey("overrides", name), key)
					moves[from] = append(moves[from], childKey(childIndex("tools", i), key))
				}
			}
		}
	}
	movePositions(pos, moves)
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
		t.Keys["tags"] = o.At("tags")
	}
	if o.Has("search_hint") {
		t.SearchHint = o.SearchHint
		t.Keys["search_hint"] = o.At("search_hint")
	}
	// Each field the override writes replaces the tool's, a written zero
	// included: gate: "" is the default gate again, sensitive: false takes
	// the tool out of the triple lock, requires: [] drops every
	// prerequisite, annotations: {} the annotation overrides.
	for _, f := range []struct {
		key string
		set func()
	}{
		{"kind", func() { t.Kind = o.Kind }},
		{"gate", func() { t.Gate = o.Gate }},
		{"enabled", func() { t.Enabled = o.Enabled }},
		{"sensitive", func() { t.Sensitive = o.Sensitive }},
		{"requires", func() { t.Requires = slices.Clone(o.Requires) }},
		{"annotations", func() { t.Annotations = o.Annotations }},
	} {
		if o.Has(f.key) {
			f.set()
			t.Keys[f.key] = o.At(f.key)
		}
	}
	if a := o.Approval; a != nil {
		if a.none {
			t.Approval = nil
			delete(t.Keys, "approval")
		} else {
			c := *a
			t.Approval = &c
			t.Keys["approval"] = o.At("approval")
		}
	}
	if oo := o.OutputSchema; oo != nil {
		at := o.At("output_schema")
		switch {
		case oo.None:
			t.OutputSchema = nil
			delete(t.Keys, "output_schema")
		case oo.Has("keep"):
			if len(oo.Keep) == 0 {
				p.add(oo.At("keep"), "%s: output_schema keep lists no property (write output_schema: none to remove the schema)", subj)
				break
			}
			if t.OutputSchema == nil {
				p.add(oo.At("keep"), "%s: output_schema keep: the tool has no output_schema to trim", subj)
				break
			}
			s, msg := keepProperties(t.OutputSchema, oo.Keep, "")
			if msg != "" {
				p.add(oo.At("keep"), "%s: output_schema keep: %s", subj, msg)
				break
			}
			t.OutputSchema = s
		default:
			t.OutputSchema = DeepCopy(oo.Schema).(map[string]any)
			t.Keys["output_schema"] = at
		}
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

// keepProperties returns a copy of schema with only the properties keep
// names: "a" keeps property a whole, "a.b" keeps a with only its property
// b (or, when a is an array, only b of its items). The kept objects allow
// members they no longer list (additionalProperties and
// unevaluatedProperties are dropped), since the upstream's answer still
// carries them and the gateway checks results against the schema. within
// names the enclosing property, for messages.
func keepProperties(schema map[string]any, keep []string, within string) (map[string]any, string) {
	of := "the schema"
	if within != "" {
		of = strconv.Quote(within)
	}
	props, ok := schema["properties"].(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("%s lists no properties to keep (replace the schema instead, for one built from allOf, anyOf or oneOf)", of)
	}
	whole := map[string]bool{}
	sub := map[string][]string{}
	for _, k := range keep {
		head, rest := k, ""
		if _, ok := props[k]; !ok {
			head, rest, _ = strings.Cut(k, ".")
		}
		if _, ok := props[head]; !ok || head == "" {
			return nil, fmt.Sprintf("%q is not a property of %s%s", k, of, didYouMean(head, slices.Collect(maps.Keys(props))))
		}
		if rest == "" {
			whole[head] = true
		} else {
			sub[head] = append(sub[head], rest)
		}
	}
	kept := map[string]any{}
	for name := range whole {
		kept[name] = props[name]
	}
	for _, name := range slices.Sorted(maps.Keys(sub)) {
		if whole[name] {
			continue
		}
		path := name
		if within != "" {
			path = within + "." + name
		}
		prop, _ := props[name].(map[string]any)
		if items, ok := prop["items"].(map[string]any); ok && prop["properties"] == nil {
			trimmed, msg := keepProperties(items, sub[name], path)
			if msg != "" {
				return nil, msg
			}
			prop = maps.Clone(prop)
			prop["items"] = trimmed
			kept[name] = prop
			continue
		}
		trimmed, msg := keepProperties(prop, sub[name], path)
		if msg != "" {
			return nil, msg
		}
		kept[name] = trimmed
	}
	out := maps.Clone(schema)
	out["properties"] = kept
	delete(out, "additionalProperties")
	delete(out, "unevaluatedProperties")
	if req, ok := schema["required"].([]any); ok {
		req = slices.DeleteFunc(slices.Clone(req), func(r any) bool { s, _ := r.(string); return kept[s] == nil })
		if len(req) == 0 {
			delete(out, "required")
		} else {
			out["required"] = req
		}
	}
	return out, ""
}

// DeepCopy copies a decoded YAML or JSON value (maps, lists and
// scalars), so that tools sharing an override never share (and later
// mutate) one map, nor an import's copies of one schema.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = DeepCopy(e)
		}
		return s
	}
	return v
}

// movePositions makes the positions recorded under each key of moves (an
// override's value) stand for the tool fields it lists, which the
// override replaced. One pass over pos each way: an imported catalog
// records a position for every value of thousands of tools.
func movePositions(pos map[string]Pos, moves map[string][]string) {
	if len(moves) == 0 {
		return
	}
	replaced := map[string]bool{}
	for _, tos := range moves {
		for _, to := range tos {
			replaced[to] = true
		}
	}
	for k := range pos {
		if replaced[fieldRoot(k)] {
			delete(pos, k)
		}
	}
	for k, at := range pos {
		r := fieldRoot(k)
		for _, to := range moves[r] {
			pos[to+k[len(r):]] = at
		}
	}
}

// fieldRoot cuts a decoder path after its second element, the field of
// a tool or an override: tools[3].requires[0] → tools[3].requires,
// overrides.x.output_schema.type → overrides.x.output_schema; "" for
// other paths.
func fieldRoot(k string) string {
	i := -1
	switch {
	case strings.HasPrefix(k, "tools["):
		i = strings.IndexByte(k, ']') + 1
	case strings.HasPrefix(k, `overrides["`):
		// A name holding `"]` cuts early: a position is then missed,
		// and the problem points at the tool's field instead.
		if j := strings.Index(k, `"]`); j >= 0 {
			i = j + 2
		}
	case strings.HasPrefix(k, "overrides."):
		if j := strings.IndexAny(k[len("overrides."):], ".["); j >= 0 {
			i = len("overrides.") + j
		}
	}
	if i <= 0 || i >= len(k) || k[i] != '.' {
		return ""
	}
	if j := strings.IndexAny(k[i+1:], ".["); j >= 0 {
		return k[:i+1+j]
	}
	return k
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
