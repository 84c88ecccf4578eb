package openapi

import (
	"bytes"
	"encoding/json"
	"iter"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
)

// kin-openapi decodes each object of a JSON document by decoding all of it
// twice, once into a tree of plain values for its extensions, and then
// each member again on its own: a schema nested n levels deep is decoded
// about 3n times. Microsoft Graph's description, 20 MB of mostly nested
// schemas, took over eight seconds of CPU that way. decodeJSON decodes the
// document's containers of schemas here, each byte once, and hands
// kin-openapi only objects without those members, so the model it builds
// is the one kin-openapi would build from the whole document.

// decodeJSON decodes data, a valid JSON document, into doc. Besides the
// model, it returns the references among the component schemas that
// preResolve can fill in.
func decodeJSON(data []byte, doc *openapi3.T) ([]*openapi3.SchemaRef, error) {
	data = bytes.Trim(data, " \t\r\n")
	d := &decoder{}
	top, ok := d.members(data, "components")
	if !ok {
		return nil, json.Unmarshal(data, doc)
	}
	if err := json.Unmarshal(top.rest(), doc); err != nil {
		return nil, err
	}
	raw, has := top.picked["components"]
	if !has {
		return nil, nil
	}
	if isNull(raw) {
		doc.Components = nil
		return nil, nil
	}
	comps, ok := d.members(raw, "schemas")
	if !ok {
		doc.Components = &openapi3.Components{}
		return nil, json.Unmarshal(raw, doc.Components)
	}
	doc.Components = &openapi3.Components{}
	if err := json.Unmarshal(comps.rest(), doc.Components); err != nil {
		return nil, err
	}
	raw, has = comps.picked["schemas"]
	if !has || isNull(raw) {
		return nil, nil
	}
	schemas, err := d.schemaMap(raw)
	if err != nil {
		return nil, err
	}
	doc.Components.Schemas = schemas
	return d.refs, nil
}

type decoder struct {
	// refs are the references decoded, each an object of "$ref" alone.
	refs []*openapi3.SchemaRef
}

// schemaMembers are the members of a schema object that hold schemas and
// are decoded here; kin-openapi's schema decoder leaves them out of the
// extensions, so it decodes the rest to the same model.
var schemaMembers = []string{"properties", "items", "allOf", "anyOf", "oneOf", "not"}

// schemaRef decodes one schema or reference as a *openapi3.SchemaRef
// field would.
func (d *decoder) schemaRef(raw []byte) (*openapi3.SchemaRef, error) {
	if isNull(raw) {
		return nil, nil
	}
	ref := &openapi3.SchemaRef{}
	obj, ok := d.members(raw, schemaMembers...)
	if !ok || obj.ref {
		// Not an object, or a reference (with siblings or not), or a
		// spelling only kin-openapi knows how to take: its decoder, whole.
		if err := json.Unmarshal(raw, ref); err != nil {
			return nil, err
		}
		if ok && obj.onlyRef {
			d.refs = append(d.refs, ref)
		}
		return ref, nil
	}
	s := &openapi3.Schema{}
	if !plainSchema(obj.others, s) {
		*s = openapi3.Schema{}
		if err := json.Unmarshal(obj.rest(), s); err != nil {
			return nil, err
		}
	}
	for key, raw := range obj.picked {
		var err error
		switch key {
		case "properties":
			s.Properties, err = d.schemaMap(raw)
		case "items":
			s.Items, err = d.schemaRef(raw)
		case "not":
			s.Not, err = d.schemaRef(raw)
		case "allOf":
			s.AllOf, err = d.schemaList(raw)
		case "anyOf":
			s.AnyOf, err = d.schemaList(raw)
		case "oneOf":
			s.OneOf, err = d.schemaList(raw)
		}
		if err != nil {
			return nil, err
		}
	}
	ref.Value = s
	return ref, nil
}

// schemaMap decodes an object of named schemas as an openapi3.Schemas
// field would: null is nil, {} an empty map.
func (d *decoder) schemaMap(raw []byte) (openapi3.Schemas, error) {
	if isNull(raw) {
		return nil, nil
	}
	if raw[0] != '{' {
		var m openapi3.Schemas
		return m, json.Unmarshal(raw, &m)
	}
	out := openapi3.Schemas{}
	for m := range eachMember(raw) {
		s, err := d.schemaRef(m.val)
		if err != nil {
			return nil, err
		}
		out[m.key] = s
	}
	return out, nil
}

// schemaList decodes an array of schemas as an openapi3.SchemaRefs field
// would: null is nil, [] an empty slice.
func (d *decoder) schemaList(raw []byte) (openapi3.SchemaRefs, error) {
	if isNull(raw) {
		return nil, nil
	}
	if raw[0] != '[' {
		var l openapi3.SchemaRefs
		return l, json.Unmarshal(raw, &l)
	}
	out := openapi3.SchemaRefs{}
	for i := skipSpace(raw, 1); raw[i] != ']'; {
		end := skipValue(raw, i)
		s, err := d.schemaRef(raw[i:end])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		if i = skipSpace(raw, end); raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return out, nil
}

// object is a JSON object split into the members asked for and the rest.
type object struct {
	picked map[string][]byte
	// others are the members not picked, in their order.
	others []member
	// ref is set when a member is spelt "$ref" in any case, onlyRef when
	// that is the object's only member, spelt exactly.
	ref, onlyRef bool
}

// rest is the object without the picked members.
func (o *object) rest() []byte {
	n := 2
	for _, m := range o.others {
		n += len(m.rawKey) + len(m.val) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range o.others {
		if i > 0 {
			b = append(b, ',')
		}
		// The key as written, escapes and all.
		b = append(b, m.rawKey...)
		b = append(b, ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}

// members splits raw, a JSON object, into the members named by pick and
// the rest. It reports false when raw is not an object, or when a picked
// member appears twice or in another spelling that encoding/json would
// also take for it (case-insensitively): kin-openapi then decodes it whole.
func (d *decoder) members(raw []byte, pick ...string) (object, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return object{}, false
	}
	obj := object{picked: map[string][]byte{}}
	n := 0
	for m := range eachMember(raw) {
		n++
		if strings.EqualFold(m.key, "$ref") {
			obj.ref = true
			obj.onlyRef = m.key == "$ref"
		}
		taken := false
		for _, p := range pick {
			if !strings.EqualFold(m.key, p) {
				continue
			}
			if _, dup := obj.picked[p]; dup || m.key != p {
				return object{}, false
			}
			obj.picked[p], taken = m.val, true
		}
		if !taken {
			obj.others = append(obj.others, m)
		}
	}
	obj.onlyRef = obj.onlyRef && n == 1
	return obj, true
}

// plainSchema fills s from members that only name, describe and type a
// schema ("type": "string", "description": "…", "nullable": true, and
// extensions), the bulk of a large document's leaves, as kin-openapi's
// decoder would, without its two passes over reflection. It reports false,
// having changed nothing that matters, for anything else: a member it does
// not know or a value of another kind, left to kin-openapi.
func plainSchema(others []member, s *openapi3.Schema) bool {
	if len(others) > 32 {
		return false
	}
	for i, m := range others {
		for _, o := range others[:i] {
			if o.key == m.key {
				return false
			}
		}
		if strings.HasPrefix(m.key, "x-") {
			continue
		}
		switch m.key {
		case "type", "title", "format", "description", "pattern":
			if m.val[0] != '"' {
				return false
			}
		case "nullable", "readOnly", "writeOnly", "deprecated", "uniqueItems":
			if v := string(m.val); v != "true" && v != "false" {
				return false
			}
		default:
			return false
		}
	}
	for _, m := range others {
		if strings.HasPrefix(m.key, "x-") {
			var v any
			if json.Unmarshal(m.val, &v) != nil {
				return false
			}
			if s.Extensions == nil {
				s.Extensions = map[string]any{}
			}
			s.Extensions[m.key] = v
			continue
		}
		switch m.key {
		case "type", "title", "format", "description", "pattern":
			str, ok := jsonString(m.val)
			if !ok {
				return false
			}
			switch m.key {
			case "type":
				s.Type = &openapi3.Types{str}
			case "title":
				s.Title = str
			case "format":
				s.Format = str
			case "description":
				s.Description = str
			case "pattern":
				s.Pattern = str
			}
		case "nullable":
			s.Nullable = string(m.val) == "true"
		case "readOnly":
			s.ReadOnly = string(m.val) == "true"
		case "writeOnly":
			s.WriteOnly = string(m.val) == "true"
		case "deprecated":
			s.Deprecated = string(m.val) == "true"
		case "uniqueItems":
			s.UniqueItems = string(m.val) == "true"
		}
	}
	return true
}

// jsonString decodes raw, a JSON string, as encoding/json would.
func jsonString(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// member is one member of a JSON object: its key decoded and as written,
// and its value.
type member struct {
	key         string
	rawKey, val []byte
}

// eachMember yields the members of raw, a valid JSON object, in order.
func eachMember(raw []byte) iter.Seq[member] {
	return func(yield func(member) bool) {
		for i := skipSpace(raw, 1); raw[i] != '}'; {
			end := skipValue(raw, i)
			m := member{rawKey: raw[i:end]}
			var ok bool
			if m.key, ok = jsonString(m.rawKey); !ok {
				return // not a valid document: json.Valid said it was
			}
			i = skipSpace(raw, skipSpace(raw, end)+1) // past the colon
			end = skipValue(raw, i)
			m.val = raw[i:end]
			if !yield(m) {
				return
			}
			if i = skipSpace(raw, end); raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
	}
}

// skipSpace returns the index of the first byte at or after i in raw that
// is not JSON white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the JSON value that starts at i
// in raw, which is valid JSON.
func skipValue(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		default:
			if depth == 0 {
				// A literal: a number, true, false or null.
				for i < len(raw) && !strings.ContainsRune(" \t\n\r,]}", rune(raw[i])) {
					i++
				}
				return i
			}
		}
	}
	return i
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw []byte) bool { return string(raw) == "null" }

// componentSchemaRef is a reference preResolve fills in: to a component
// schema by a name that needs no escaping in a JSON pointer or a URL.
var componentSchemaRef = regexp.MustCompile(`^#/components/schemas/([A-Za-z0-9._-]+)$`)

// preResolve points each of refs that names a component schema at the
// schema it stands for, as kin-openapi's resolver would: the component
// itself, or, when the component is only a reference to another (a chain
// A → B → C), the schema at the chain's end. That resolver walks the
// referenced schema again at every reference to it, so on Graph's
// description, whose 2,500 schemas refer to each other 100,000 times, it
// took ten seconds, and a chain of 4,000 components twenty (each link
// walked the rest of the chain); after preResolve it finds these
// references filled in and passes over them. It reports false when a
// chain of component references loops or ends at nothing: the caller
// then reads the document through its tree, which marks such references
// (see markRefs) instead of leaving the resolver to walk them.
func preResolve(doc *openapi3.T, refs []*openapi3.SchemaRef) bool {
	if doc.Components == nil {
		return true
	}
	schemas := doc.Components.Schemas
	// end returns the schema a chain starting at component name ends at,
	// filling in every link it passes (so no link is walked twice). It
	// returns nil and false for a chain that loops or names a component
	// that is not there, and nil and true for one whose last link is a
	// reference of another shape (into a schema's properties, a name
	// with escapes): kin-openapi follows that one.
	var chain []string
	broken := map[string]bool{} // links of chains that loop or dangle
	other := map[string]bool{}  // links of chains left to kin-openapi
	end := func(name string) (*openapi3.Schema, bool) {
		chain = chain[:0]
		var v *openapi3.Schema
		for {
			t := schemas[name]
			if t != nil && t.Value != nil {
				v = t.Value
				break
			}
			if t == nil || broken[name] || len(chain) > len(schemas) {
				for _, n := range chain {
					broken[n] = true
				}
				return nil, false
			}
			m := componentSchemaRef.FindStringSubmatch(t.Ref)
			if m == nil || other[name] {
				for _, n := range chain {
					other[n] = true
				}
				return nil, true
			}
			chain = append(chain, name)
			name = m[1]
		}
		for _, n := range chain {
			schemas[n].Value = v
		}
		return v, true
	}
	ok := true
	for _, r := range refs {
		m := componentSchemaRef.FindStringSubmatch(r.Ref)
		if m == nil || r.Value != nil {
			continue
		}
		v, found := end(m[1])
		if v != nil {
			r.Value = v
		}
		ok = ok && found
	}
	return ok
}
