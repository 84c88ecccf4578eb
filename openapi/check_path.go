package openapi

import (
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// How gateway check follows a response.select or fields path through a
// response schema. The rule is the one a reader of the document would
// apply: a member exists when the schema, or any branch of an allOf,
// anyOf or oneOf that can apply, declares it (allOf branches all apply,
// so their members merge), or when additionalProperties or
// patternProperties admit it. A schema that says nothing about its
// members ({} or {type: object}, no composition that does) is taken as
// holding anything: the document is silent, so the check is too. A
// schema that names its members holds those and no others, whether they
// are written in properties or spread over a composition, so a path
// into a member that no branch declares is a problem.
//
// The path is read as gjson reads it: "." and "|" separate components,
// "\." escapes a dot, "#" maps the rest of the path (up to a "|") over
// an array's elements (and is the count when it is last), a number is an
// index, "#(…)" is the first element a query matches and "#(…)#" every
// one, "{a,b:c.d}" and "[a,b]" build an object or array from sub-paths
// (each checked). Wildcards, modifiers other than @this, literals and
// JSON Lines paths are taken as found: the check reports only what it
// can be sure of.

// maxComposition bounds how deep allOf/anyOf/oneOf are followed for one
// step (a $ref cycle through a composition would otherwise not end).
const maxComposition = 8

// component is one component of a gjson path; pipe is set when a "|"
// stands before it.
type component struct {
	text string
	pipe bool
}

// splitPath splits a gjson path into components, keeping groups
// ("{…}", "[…]", "#(…)") and strings whole.
func splitPath(p string) []component {
	var out []component
	pipe := false
	for i := 0; i <= len(p); {
		s := i
		if i < len(p) && (p[i] == '{' || p[i] == '[') {
			i = skipBrackets(p, i)
		} else if strings.HasPrefix(p[i:], "#(") || strings.HasPrefix(p[i:], "#[") {
			i = skipBrackets(p, i+1)
		}
		for i < len(p) && p[i] != '.' && p[i] != '|' {
			if p[i] == '\\' {
				i++
			}
			i++
		}
		if i > len(p) {
			i = len(p)
		}
		out = append(out, component{text: p[s:i], pipe: pipe})
		if i >= len(p) {
			break
		}
		pipe = p[i] == '|'
		i++
	}
	return out
}

// skipBrackets returns the index after the bracketed group opening at
// p[s] (brackets of any kind nest; strings and "\" escapes hold them), or
// len(p) when it is never closed.
func skipBrackets(p string, s int) int {
	depth := 0
	for i := s; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '"':
			for i++; i < len(p) && p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(p)
}

// subSelectors splits a multipath's inside ("a,b:c.d") at its top-level
// commas into names (as gjson names the members) and paths.
func subSelectors(inner string) (names, paths []string) {
	start, colon, depth := 0, -1, 0
	push := func(end int) {
		sel := inner[start:end]
		name, path := "", sel
		if colon >= 0 {
			name, path = strings.Trim(inner[start:colon], `"`), inner[colon+1:end]
		} else {
			c := splitPath(sel)
			name = unescapeKey(c[len(c)-1].text)
		}
		names, paths = append(names, name), append(paths, path)
		start, colon = end+1, -1
	}
	for i := 0; i < len(inner); i++ {
		switch inner[i] {
		case '\\':
			i++
		case '"':
			for i++; i < len(inner) && inner[i] != '"'; i++ {
				if inner[i] == '\\' {
					i++
				}
			}
		case ':':
			if depth == 0 && colon < 0 {
				colon = i
			}
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			depth--
		case ',':
			if depth == 0 {
				push(i)
			}
		}
	}
	push(len(inner))
	return names, paths
}

func unescapeKey(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasWildcard reports an unescaped * or ? in a key component.
func hasWildcard(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		}
	}
	return false
}

// walker follows paths through the schemas of one document. It is not
// safe for concurrent use.
type walker struct {
	d *Document
	// children maps a schema to the component schemas that extend it
	// (allOf: [{$ref: it}, …]), built on first need.
	children map[*openapi3.Schema][]*openapi3.Schema
}

// subtypes returns the schemas a discriminated s may stand for: those its
// discriminator's mapping names, and the component schemas that extend
// it through allOf (OpenAPI 3, Discriminator Object: inheritance and
// polymorphism). Without a discriminator, none.
func (w *walker) subtypes(s *openapi3.Schema) []*openapi3.Schema {
	if s.Discriminator == nil || w == nil || w.d == nil || w.d.doc.Components == nil {
		return nil
	}
	comps := w.d.doc.Components.Schemas
	if w.children == nil {
		w.children = map[*openapi3.Schema][]*openapi3.Schema{}
		for _, name := range sortedKeys(comps) {
			c := comps[name]
			if c == nil || c.Value == nil {
				continue
			}
			for _, b := range c.Value.AllOf {
				if b != nil && b.Value != nil && b.Value != c.Value {
					w.children[b.Value] = append(w.children[b.Value], c.Value)
				}
			}
		}
	}
	out := slices.Clone(w.children[s])
	for _, k := range sortedKeys(s.Discriminator.Mapping) {
		m := s.Discriminator.Mapping[k]
		v := m.Value
		if name, ok := strings.CutPrefix(m.Ref, "#/components/schemas/"); v == nil && ok && comps[name] != nil {
			v = comps[name].Value
		}
		if v != nil && v != s && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// walk follows a gjson path through s. It returns the schema of what the
// path yields (nil: unknown, anything), whether the path can yield
// anything at all, and when it cannot, the part of the path that is not
// in the schema.
func (w *walker) walk(s *openapi3.Schema, path string) (*openapi3.Schema, bool, string) {
	if strings.HasPrefix(path, "..") {
		return nil, true, "" // JSON Lines: not a document of one schema
	}
	return w.walkComponents(s, splitPath(path))
}

func (w *walker) walkComponents(cur *openapi3.Schema, comps []component) (*openapi3.Schema, bool, string) {
	for i := 0; i < len(comps); i++ {
		if cur == nil {
			return nil, true, ""
		}
		c := comps[i].text
		switch {
		case c == "#" && i == len(comps)-1:
			if found, open := elements(cur, 0); len(found) == 0 && !open {
				return nil, false, c
			}
			return typed("integer"), true, "" // the count
		case c == "#" || strings.HasPrefix(c, "#(") && strings.HasSuffix(c, ")#") || strings.HasPrefix(c, "#[") && strings.HasSuffix(c, "]#"):
			// The rest of the path, up to a "|", applies to each element.
			elem, ok := either(elements(cur, 0))
			if !ok {
				return nil, false, c
			}
			end := i + 1
			for end < len(comps) && !comps[end].pipe {
				end++
			}
			sub, ok, missing := w.walkComponents(elem, comps[i+1:end])
			if !ok {
				return nil, false, missing
			}
			cur = arrayOf(sub)
			i = end - 1
		case strings.HasPrefix(c, "#(") || strings.HasPrefix(c, "#["):
			elem, ok := either(elements(cur, 0))
			if !ok {
				return nil, false, c
			}
			cur = elem
		case strings.HasPrefix(c, "{") || strings.HasPrefix(c, "["):
			if !strings.HasSuffix(c, string(rune(c[0]+2))) { // "}" or "]"
				return nil, true, "" // not a multipath gjson can read: validate's business
			}
			names, paths := subSelectors(c[1 : len(c)-1])
			props := openapi3.Schemas{}
			var items []*openapi3.Schema
			for j, p := range paths {
				if strings.TrimSpace(p) == "" {
					continue
				}
				sub, ok, missing := w.walk(cur, p)
				if !ok {
					return nil, false, missing
				}
				props[names[j]] = openapi3.NewSchemaRef("", orEmpty(sub))
				items = append(items, sub)
			}
			if c[0] == '{' {
				cur = &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: props}
			} else {
				cur = arrayOf(unionOf(items))
			}
		case c == "@this":
		case strings.HasPrefix(c, "@") || strings.HasPrefix(c, "!") || hasWildcard(c):
			if found, _ := w.member(cur, c, 0, nil); len(found) > 0 {
				cur = unionOf(found) // a key such as JSON-LD's "@id"
				continue
			}
			return nil, true, ""
		default:
			key := unescapeKey(c)
			if isIndex(key) {
				if found, open := elements(cur, 0); len(found) > 0 || open {
					cur, _ = either(found, open)
					continue
				}
			}
			next, ok := either(w.member(cur, key, 0, nil))
			if !ok {
				return nil, false, key
			}
			cur = next
		}
	}
	return cur, true, ""
}

// member returns the schemas key can have in an object s describes, and
// whether s leaves members it does not name open (unknown). A subtype of
// a discriminated schema adds its members; below one (parent set), the
// allOf branch back to the parent and further subtypes are not followed.
func (w *walker) member(s *openapi3.Schema, key string, depth int, parent *openapi3.Schema) (found []*openapi3.Schema, open bool) {
	return w.memberIn(s, key, depth, parent, map[[2]*openapi3.Schema]walked{})
}

// walked is what a composition walk found below one schema. A schema
// reached again (allOf of ten $refs to the next schema, nine deep) is
// answered from it: without it the walk grew as branches to the power of
// maxComposition, and a 4 KB document held gateway check for hours.
type walked struct {
	found []*openapi3.Schema
	open  bool
}

// distinct drops repeated schemas, so a walk's results stay as small as
// the document.
func distinct(found []*openapi3.Schema) []*openapi3.Schema {
	out := found[:0:0]
	for _, f := range found {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func (w *walker) memberIn(s *openapi3.Schema, key string, depth int, parent *openapi3.Schema, seen map[[2]*openapi3.Schema]walked) (found []*openapi3.Schema, open bool) {
	if s == nil || depth > maxComposition {
		return nil, true
	}
	k := [2]*openapi3.Schema{s, parent}
	if r, ok := seen[k]; ok {
		return r.found, r.open
	}
	defer func() { found = distinct(found); seen[k] = walked{found, open} }()
	objectish := s.Type.IsEmpty() || s.Type.Includes("object")
	ap := s.AdditionalProperties
	if objectish {
		switch p := s.Properties[key]; {
		case p != nil && p.Value == nil:
			open = true
		case p != nil:
			found = append(found, p.Value)
		case ap.Schema != nil && ap.Schema.Value != nil:
			found = append(found, ap.Schema.Value)
		case ap.Has != nil && *ap.Has:
			open = true
		default:
			for pat, ps := range s.PatternProperties {
				if re, err := regexp.Compile(pat); err != nil || re.MatchString(key) {
					if ps == nil || ps.Value == nil {
						open = true
					} else {
						found = append(found, ps.Value)
					}
				}
			}
		}
	}
	silent := objectish && len(s.Properties) == 0 && len(s.PatternProperties) == 0 && ap.Schema == nil && (ap.Has == nil || *ap.Has)
	for _, b := range s.AllOf {
		if parent != nil && b.Value == parent {
			continue
		}
		f, o := w.memberIn(b.Value, key, depth+1, parent, seen)
		found = append(found, f...)
		silent = silent && o
	}
	for _, alts := range []openapi3.SchemaRefs{s.AnyOf, s.OneOf} {
		if len(alts) == 0 {
			continue
		}
		anyOpen := false
		for _, b := range alts {
			f, o := w.memberIn(b.Value, key, depth+1, parent, seen)
			found = append(found, f...)
			anyOpen = anyOpen || o
		}
		silent = silent && anyOpen
	}
	if parent == nil {
		for _, sub := range w.subtypes(s) {
			f, _ := w.memberIn(sub, key, depth+1, s, seen)
			found = append(found, f...)
		}
	}
	return found, open || silent
}

// elements returns the schemas an element of an array s describes can
// have, and whether s might be an array of anything (unknown).
func elements(s *openapi3.Schema, depth int) (found []*openapi3.Schema, open bool) {
	return elementsIn(s, depth, map[*openapi3.Schema]walked{})
}

func elementsIn(s *openapi3.Schema, depth int, seen map[*openapi3.Schema]walked) (found []*openapi3.Schema, open bool) {
	if s == nil || depth > maxComposition {
		return nil, true
	}
	if r, ok := seen[s]; ok {
		return r.found, r.open
	}
	defer func() { found = distinct(found); seen[s] = walked{found, open} }()
	untyped := s.Type.IsEmpty()
	if untyped || s.Type.Includes("array") {
		switch {
		case s.Items != nil && s.Items.Value != nil:
			found = append(found, s.Items.Value)
		case s.Items != nil || !untyped:
			open = true
		}
	}
	silent := untyped && s.Items == nil && len(s.Properties) == 0
	for _, b := range s.AllOf {
		f, o := elementsIn(b.Value, depth+1, seen)
		found = append(found, f...)
		silent = silent && o
	}
	for _, alts := range []openapi3.SchemaRefs{s.AnyOf, s.OneOf} {
		if len(alts) == 0 {
			continue
		}
		anyOpen := false
		for _, b := range alts {
			f, o := elementsIn(b.Value, depth+1, seen)
			found = append(found, f...)
			anyOpen = anyOpen || o
		}
		silent = silent && anyOpen
	}
	return found, open || silent
}

// either turns what member or elements found into one schema: nil when
// anything may be there, an anyOf when several branches declare it.
func either(found []*openapi3.Schema, open bool) (*openapi3.Schema, bool) {
	switch {
	case open:
		return nil, true
	case len(found) == 0:
		return nil, false
	}
	return unionOf(found), true
}

func unionOf(list []*openapi3.Schema) *openapi3.Schema {
	var uniq []*openapi3.Schema
	for _, s := range list {
		if s == nil {
			return nil
		}
		if !slices.Contains(uniq, s) {
			uniq = append(uniq, s)
		}
	}
	switch len(uniq) {
	case 0:
		return nil
	case 1:
		return uniq[0]
	}
	u := &openapi3.Schema{}
	for _, s := range uniq {
		u.AnyOf = append(u.AnyOf, openapi3.NewSchemaRef("", s))
	}
	return u
}

func typed(t string) *openapi3.Schema { return &openapi3.Schema{Type: &openapi3.Types{t}} }

func arrayOf(s *openapi3.Schema) *openapi3.Schema {
	return &openapi3.Schema{Type: &openapi3.Types{"array"}, Items: openapi3.NewSchemaRef("", orEmpty(s))}
}

func orEmpty(s *openapi3.Schema) *openapi3.Schema {
	if s == nil {
		return &openapi3.Schema{}
	}
	return s
}

// typesOf returns the JSON types a value s describes can have, or false
// when s does not say.
func typesOf(s *openapi3.Schema, depth int) ([]string, bool) {
	return typesIn(s, depth, map[*openapi3.Schema]typesFound{})
}

// typesFound is what typesIn found for one schema (see walked).
type typesFound struct {
	types []string
	known bool
}

func typesIn(s *openapi3.Schema, depth int, seen map[*openapi3.Schema]typesFound) (types []string, known bool) {
	if s == nil || depth > maxComposition {
		return nil, false
	}
	if r, ok := seen[s]; ok {
		return r.types, r.known
	}
	defer func() { seen[s] = typesFound{types, known} }()
	if !s.Type.IsEmpty() {
		return s.Type.Slice(), true
	}
	var alts openapi3.SchemaRefs
	alts = append(append(alts, s.AnyOf...), s.OneOf...)
	if len(alts) > 0 {
		var out []string
		for _, b := range alts {
			ts, ok := typesIn(b.Value, depth+1, seen)
			if !ok {
				return nil, false
			}
			for _, t := range ts {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
		return out, true
	}
	for _, b := range s.AllOf {
		if ts, ok := typesIn(b.Value, depth+1, seen); ok {
			return ts, true
		}
	}
	return nil, false
}
