package catalog

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// The decoder maps a yaml.Node tree onto the model by reflection, strictly:
// an unknown field, a duplicate key or a value of the wrong shape is a
// problem at its line and column, and decoding goes on to find the next.
//
// Struct fields map by their yaml tag; an embedded Meta records where the
// mapping and each written key's value stood. A null value counts as absent.
// Every configuration scalar is ${VAR}-expanded before it is parsed, so
// "enabled: ${FLAG:-true}" works for a bool; text and schemas an agent
// reads or the gateway sends are taken verbatim (see verbatim).

// Bounds on what one catalog may cost to decode. Aliases can make a small
// file describe a huge tree ("billion laughs"), or a cyclic one: decoding
// may visit each written node at most twice over, plus aliasSlack.
const (
	maxDepth   = 64
	aliasSlack = 10000
)

type decoder struct {
	p      *problems
	lookup func(string) (string, bool)
	// pos records where each value stood, by path ("tools[2].request.query.state"),
	// for validation to point at values that have no Meta of their own
	// (map entries, slice elements, JSON Schema and body trees).
	pos       map[string]Pos
	labels    map[string]string // list element path → the name it gives itself, for messages
	visits    int
	maxVisits int
	active    map[*yaml.Node]bool // anchors being decoded: an alias to one is a cycle
	tooBig    bool
	// redact is set while an included file is decoded: a glob may have
	// matched a file that was never meant for the catalog (a .env, a key),
	// and load errors reach logs and /status, so messages about it show
	// positions and rules, never its values.
	redact bool
	// authOnly decodes only what LoadOptions.AuthOnly asks for.
	authOnly bool
}

func newDecoder(p *problems, lookup func(string) (string, bool)) *decoder {
	return &decoder{p: p, lookup: lookup, pos: map[string]Pos{}, labels: map[string]string{}, active: map[*yaml.Node]bool{}}
}

var (
	metaType        = reflect.TypeFor[Meta]()
	fieldsType      = reflect.TypeFor[Fields]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

func nodePos(n *yaml.Node) Pos { return Pos{Line: n.Line, Column: n.Column} }

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names a node's shape for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return strconv.Quote(clip(n.Value))
	}
	return "an unsupported node"
}

// notShown stands for a value of an included file in messages.
const notShown = "a value not shown (an included file may hold secrets)"

// shown is how a message shows scalar n, whose expanded text is s: quoted
// as written, so that an expansion (an environment variable's value, often
// a secret) never appears; in an included file, not at all.
func (d *decoder) shown(n *yaml.Node, s string) string {
	switch {
	case d.redact:
		return notShown
	case s != n.Value:
		return strconv.Quote(clip(n.Value)) + " (expanded; its value is not shown)"
	}
	return strconv.Quote(clip(s))
}

// describe is describe, with scalars shown as d.shown does.
func (d *decoder) describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		return d.shown(n, n.Value)
	}
	return describe(n)
}

// childKey extends a path with a mapping key; childIndex with a list index.
func childKey(path, key string) string {
	if validArgName(key) && !strings.ContainsAny(key, ".") {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func childIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// where names a path for messages, with the name of the list element it
// is in when that element has one: `tools[0] "get_job"`, or
// `tools[0].request of tool "get_job"` below it.
func (d *decoder) where(path string) string {
	if path == "" {
		return "the catalog"
	}
	elem, name := "", ""
	for i := 0; i < len(path); i++ {
		if path[i] != ']' {
			continue
		}
		if n, ok := d.labels[path[:i+1]]; ok {
			elem, name = path[:i+1], n
		}
	}
	switch {
	case elem == "":
		return path
	case elem == path:
		return elem + " " + strconv.Quote(name)
	}
	what := elem[:strings.LastIndexByte(elem, '[')]
	if i := strings.LastIndexAny(what, ".]"); i >= 0 {
		what = what[i+1:]
	}
	what = strings.TrimSuffix(what, "s")
	if what == "" {
		what = "element"
	}
	return path + " of " + what + " " + strconv.Quote(name)
}

// labelElem remembers the name a list element gives itself, when it is
// a mapping with a plain "name", for where.
func (d *decoder) labelElem(n *yaml.Node, path string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Kind == yaml.ScalarNode && k.Value == "name" && v.Kind == yaml.ScalarNode && v.Value != "" {
			d.labels[path] = clip(v.Value)
			return
		}
	}
}

func (d *decoder) decodeRoot(n *yaml.Node, c *Catalog) {
	nodes := countNodes(n)
	d.maxVisits = 2*nodes + aliasSlack
	if len(d.pos) == 0 {
		// Nearly every node gets a position: sized once, the map is not
		// grown and rehashed a dozen times over a large catalog.
		d.pos = make(map[string]Pos, nodes/2)
	}
	d.decode(n, reflect.ValueOf(c).Elem(), "", 0)
}

// countNodes counts the nodes written in the file, not following aliases.
func countNodes(n *yaml.Node) int {
	total := 1
	for _, c := range n.Content {
		total += countNodes(c)
	}
	return total
}

// resolve follows an alias. It returns nil, after reporting, for a cycle
// or when the decode budget is spent; done must be called after use.
func (d *decoder) resolve(n *yaml.Node, depth int) (target *yaml.Node, done func()) {
	nop := func() {}
	d.visits++
	if d.visits > d.maxVisits || depth > maxDepth {
		if !d.tooBig {
			d.tooBig = true
			d.p.add(nodePos(n), "catalog nests too deeply or its aliases expand too far (limits: depth %d, %d values)", maxDepth, d.maxVisits)
		}
		return nil, nop
	}
	if n.Kind != yaml.AliasNode {
		return n, nop
	}
	if n.Alias == nil || d.active[n.Alias] {
		d.p.add(nodePos(n), "alias *%s refers to a value that contains it", n.Value)
		return nil, nop
	}
	d.active[n.Alias] = true
	return n.Alias, func() { delete(d.active, n.Alias) }
}

// decode decodes n into v, the value at path. Its position is recorded
// under path.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, depth int) {
	d.pos[path] = nodePos(n)
	n, done := d.resolve(n, depth)
	defer done()
	if n == nil {
		return
	}
	t := v.Type()
	switch {
	case t == fieldsType:
		d.decodeFields(n, v, path, depth)
		return
	case t == workspaceBindingType && n.Kind == yaml.ScalarNode && !isNull(n):
		d.decodeWorkspaceNone(n, v, path)
		return
	case t == outputOverrideType:
		d.decodeOutputOverride(n, v, path, depth)
		return
	case t == approvalType && n.Kind == yaml.ScalarNode && !isNull(n):
		d.decodeApprovalScalar(n, v, path)
		return
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType):
		d.decodeUnmarshaler(n, v, path)
		return
	case t.Kind() == reflect.Interface:
		if x, ok := d.generic(n, path, depth); ok && x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Interface:
		if n.Kind != yaml.MappingNode {
			d.mismatch(n, path, "a mapping")
			return
		}
		if x, ok := d.generic(n, path, depth); ok {
			v.Set(reflect.ValueOf(x))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			return
		}
		e := reflect.New(t.Elem())
		d.decode(n, e.Elem(), path, depth+1)
		v.Set(e)
	case reflect.Struct:
		d.decodeStruct(n, v, path, depth)
	case reflect.Slice:
		d.decodeSlice(n, v, path, depth)
	case reflect.Map:
		d.decodeMap(n, v, path, depth)
	default:
		d.decodeScalar(n, v, path)
	}
}

// mismatch reports a value of the wrong shape.
func (d *decoder) mismatch(n *yaml.Node, path, want string) {
	d.p.add(nodePos(n), "%s: want %s, got %s", d.where(path), want, d.describe(n))
}

// scalar returns n's expanded text, or false after reporting.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.mismatch(n, path, want)
		return "", false
	}
	if verbatim(path) {
		return n.Value, true
	}
	s, unset, err := expand(n.Value, d.lookup)
	if err != nil {
		msg := err.Error()
		if d.redact {
			msg = "malformed ${…}: want ${NAME} or ${NAME:-default} (write $$ for a literal $)"
		}
		d.p.add(nodePos(n), "%s: %s", d.where(path), msg)
		return "", false
	}
	for _, name := range unset {
		d.p.add(nodePos(n), "%s: environment variable %s is not set (write ${%s:-default} to give a default)", d.where(path), name, name)
	}
	return s, len(unset) == 0
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	want := "an integer"
	switch v.Kind() {
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "a boolean"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	}
	if isNull(n) {
		return // the zero value, as yaml.v3 does
	}
	s, ok := d.scalar(n, path, want)
	if !ok {
		return
	}
	bad := func() { d.p.add(nodePos(n), "%s: want %s, got %s", d.where(path), want, d.shown(n, s)) }
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, ok := parseBool(s)
		if !ok {
			bad()
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, v.Type().Bits())
		if err != nil {
			bad()
			return
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), v.Type().Bits())
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			bad()
			return
		}
		v.SetFloat(f)
	default:
		// The model has no other scalar kinds; reaching here is a bug in
		// this package, found by the first test that loads such a field.
		panic(fmt.Sprintf("catalog: cannot decode into %s", v.Type()))
	}
}

// parseBool accepts the YAML 1.2 booleans and, because a value may come
// from an environment variable, the usual 1/0, yes/no, on/off.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

// decodeUnmarshaler hands Size and Duration their expanded node.
func (d *decoder) decodeUnmarshaler(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}
	s, ok := d.scalar(n, path, shape(v.Type()))
	if !ok {
		return
	}
	c := *n
	c.Value = s
	if err := v.Addr().Interface().(yaml.Unmarshaler).UnmarshalYAML(&c); err != nil {
		if d.redact || s != n.Value {
			// The parser's message quotes the value it was given.
			d.p.add(nodePos(n), "%s: want %s, got %s", d.where(path), shape(v.Type()), d.shown(n, s))
			return
		}
		d.p.add(nodePos(n), "%s: %v", d.where(path), err)
	}
}

// mapKeys walks a mapping's keys, reporting merge keys, non-scalar keys and
// duplicates, and calls f for each good key with its value.
func (d *decoder) mapKeys(n *yaml.Node, path string, depth int, f func(key string, k, v *yaml.Node)) {
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		switch {
		case k.Kind != yaml.ScalarNode:
			d.p.add(nodePos(k), "%s: keys must be plain strings, got %s", d.where(path), d.describe(k))
			continue
		case k.ShortTag() == "!!merge":
			d.p.add(nodePos(k), "%s: merge keys (<<) are not supported; repeat the keys or alias a whole value", d.where(path))
			continue
		}
		if line, dup := seen[k.Value]; dup {
			d.p.add(nodePos(k), "%s: duplicate key %q (first at line %d)", d.where(path), k.Value, line%fragmentLines)
			continue
		}
		seen[k.Value] = k.Line
		f(k.Value, k, v)
	}
}

type structInfo struct {
	meta   int            // index of the embedded Meta, or -1
	name   int            // index of a Name field tagged "-" (set from a map key), or -1
	fields map[string]int // yaml name → field index
	names  []string       // yaml names in declaration order, for suggestions
}

var structInfos sync.Map // reflect.Type → *structInfo

func infoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{meta: -1, name: -1, fields: map[string]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.Type == metaType:
			si.meta = i
		case tag == "-" && f.Name == "Name" && f.Type.Kind() == reflect.String:
			si.name = i
		case tag == "-" || !f.IsExported():
		default:
			if tag == "" {
				tag = strings.ToLower(f.Name)
			}
			si.fields[tag] = i
			si.names = append(si.names, tag)
		}
	}
	structInfos.Store(t, si)
	return si
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string, depth int) {
	si := infoOf(v.Type())
	var meta *Meta
	if si.meta >= 0 {
		meta = v.Field(si.meta).Addr().Interface().(*Meta)
		meta.Pos = nodePos(n)
		meta.Keys = map[string]Pos{}
	}
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.mismatch(n, path, "a mapping")
		return
	}
	d.mapKeys(n, path, depth, func(key string, k, val *yaml.Node) {
		i, ok := si.fields[key]
		if !ok {
			// The YAML path, never the Go type behind it.
			msg := fmt.Sprintf("field %q not found in %s", key, d.where(path))
			if s := suggestField(key, si.names); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			d.p.add(nodePos(k), "%s", msg)
			return
		}
		if target := val; isNull(target) || target.Kind == yaml.AliasNode && target.Alias != nil && isNull(target.Alias) {
			return // null: as if absent
		}
		if meta != nil {
			meta.Keys[key] = nodePos(val)
		}
		d.decode(val, v.Field(i), childKey(path, key), depth+1)
	})
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string, depth int) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.mismatch(n, path, shape(v.Type()))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		d.labelElem(e, childIndex(path, i))
		d.decodeElem(e, s.Index(i), childIndex(path, i), depth+1, "")
		if path == "tools" && n.Anchor == "" && e.Anchor == "" {
			// The top-level tool list is reached once (no alias can name
			// the top mapping or an unanchored node), and an alias into a
			// tool holds its own pointer: the tool's nodes can go now. A
			// list of thousands of tools parses to several times the
			// size of what it decodes to, and a reload holds both beside
			// the catalog that keeps serving.
			n.Content[i] = nil
		}
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string, depth int) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.mismatch(n, path, shape(v.Type()))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	d.mapKeys(n, path, depth, func(key string, _, val *yaml.Node) {
		e := reflect.New(v.Type().Elem()).Elem()
		d.decodeElem(val, e, childKey(path, key), depth+1, key)
		m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
	})
	v.Set(m)
}

// decodeElem decodes a list element or map value. An element that points
// to a struct always exists, even when written as null (a bare "view:"
// under gates declares the gate); its Name, if it has one, is the map key.
func (d *decoder) decodeElem(n *yaml.Node, e reflect.Value, path string, depth int, key string) {
	t := e.Type()
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		p := reflect.New(t.Elem())
		e.Set(p)
		e = p.Elem()
		if si := infoOf(t.Elem()); si.name >= 0 {
			e.Field(si.name).SetString(key)
		}
	}
	d.decode(n, e, path, depth)
}

// decodeFields decodes an ordered mapping of output names to gjson paths.
func (d *decoder) decodeFields(n *yaml.Node, v reflect.Value, path string, depth int) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.mismatch(n, path, "a mapping of output names to paths")
		return
	}
	fs := Fields{}
	d.mapKeys(n, path, depth, func(key string, _, val *yaml.Node) {
		p := childKey(path, key)
		d.pos[p] = nodePos(val)
		val, done := d.resolve(val, depth+1)
		defer done()
		if val == nil {
			return
		}
		if s, ok := d.scalar(val, p, "a gjson path"); ok {
			fs = append(fs, Field{Name: key, Path: s})
		}
	})
	v.Set(reflect.ValueOf(fs))
}

// generic decodes a subtree as JSON-compatible values: map[string]any,
// []any, string, bool, int, int64, uint64, float64 and nil, expanding
// ${VAR} in every string. Keys are kept as written.
func (d *decoder) generic(n *yaml.Node, path string, depth int) (any, bool) {
	d.pos[path] = nodePos(n)
	n, done := d.resolve(n, depth)
	defer done()
	if n == nil {
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		ok := true
		d.mapKeys(n, path, depth, func(key string, _, val *yaml.Node) {
			x, good := d.generic(val, childKey(path, key), depth+1)
			ok = ok && good
			m[key] = x
		})
		return m, ok
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		ok := true
		for i, e := range n.Content {
			x, good := d.generic(e, childIndex(path, i), depth+1)
			ok = ok && good
			s[i] = x
		}
		return s, ok
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, true
		case "!!str", "!!timestamp", "!!binary":
			s, ok := d.scalar(n, path, "a string")
			return s, ok
		case "!!bool", "!!int", "!!float":
			var x any
			if err := n.Decode(&x); err != nil {
				// yaml.v3's text names its tags and Go types; say it plainly.
				what := map[string]string{"!!bool": "a boolean", "!!int": "an integer", "!!float": "a number"}[n.ShortTag()]
				shown := clip(n.Value) // a plain number, never expanded
				if d.redact {
					shown = notShown
				}
				d.p.add(nodePos(n), "%s: %s is not %s this catalog can hold", d.where(path), shown, what)
				return nil, false
			}
			if f, isFloat := x.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
				shown := n.Value
				if d.redact {
					shown = notShown
				}
				d.p.add(nodePos(n), "%s: %s has no JSON form", d.where(path), shown)
				return nil, false
			}
			return x, true
		default:
			d.p.add(nodePos(n), "%s: unsupported tag %s", d.where(path), n.Tag)
			return nil, false
		}
	}
	d.mismatch(n, path, "a value")
	return nil, false
}

// shape describes what a value of type t is written as, for "want X"
// messages: never a Go type name.
func shape(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[Duration]():
		return "a duration like 30s"
	case t == reflect.TypeFor[Size]():
		return "a size like 64KiB"
	case t == fieldsType:
		return "a mapping of output names to paths"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return shape(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct:
		return "a mapping"
	case reflect.Slice:
		switch e := t.Elem(); {
		case e.Kind() == reflect.String:
			return "a list of strings"
		case e.Kind() == reflect.Struct, e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct:
			return "a list of mappings"
		}
		return "a list"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "a mapping of names to strings"
		}
		return "a mapping"
	}
	return "a value"
}

// suggestField is suggest for a mapping's keys, also matching a key
// written in another case style (openWorldHint, open-world for
// open_world), as MCP's own annotation names invite.
func suggestField(key string, names []string) string {
	norm := func(s string) string {
		s = strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
		return strings.TrimSuffix(s, "hint")
	}
	for _, n := range names {
		if norm(n) == norm(key) {
			return n
		}
	}
	return suggest(key, names)
}

// suggest returns the candidate closest to s, if it is close enough to be
// a likely typo.
func suggest(s string, candidates []string) string {
	best, bestDist := "", 3
	if len(s) <= 4 {
		bestDist = 2
	}
	for _, c := range candidates {
		if dist := editDistance(s, c); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
