package openapi

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/mcpgw/gateway/catalog"
)

// Real documents that the model refuses for one bad spot: a schema's
// pattern written as a number, a schema's examples written as a map, a
// schema $ref that points at a response, a parameter or a place inside
// an operation. kin-openapi refuses the whole document; repair mends the
// one spot its error names, so that the rest imports. What it cannot
// mend as the author meant is marked like a reference that cannot be
// followed, and Import skips the operations that need it, with the
// reason.

// maxRepairs bounds how many spots one document may have mended: each
// costs a load, and a document that needs more is refused with the
// error of the last.
const maxRepairs = 20

// maxCopiedNodes bounds the values (mappings, lists and scalars) that
// mending one document may copy in all. A copy is made for each place a
// reference points from, and a copied schema may hold references mended
// next, so without a bound a few kilobytes (each schema pointing at the
// next from four places, twenty deep) would copy 4^20 schemas. A
// reference whose copies would go past it is marked instead.
const maxCopiedNodes = 20_000

var (
	// badRef is the reference an error names: `bad data in "#/..."
	// (expecting ref to schema object)`, `failed to resolve "allOf" in
	// fragment in URI: "#/..."`. kin-openapi quotes it as Go does.
	badRef = regexp.MustCompile(`(?:bad data in|in fragment in URI:) ("(?:[^"\\]|\\.)*")(?: \(expecting ref to (\w+) object\))?`)
	// badField is a member of the wrong type a YAML error names, after
	// the JSON pointer of its object: `cannot unmarshal !!int into
	// string field "pattern" in /a/b`.
	badField = regexp.MustCompile(`(?s)^cannot unmarshal \S+ into \S+ field ("(?:[^"\\]|\\.)*") in (/.*)$`)
	// badNode is a value of the wrong type a YAML error names by its
	// JSON pointer: `cannot construct !!map into []interface {} in
	// /a/b/examples`.
	badNode = regexp.MustCompile("(?s)^cannot (?:unmarshal|construct) \\S+(?: `[^`]*`)? into .+? in (/.*)$")
)

// mender mends one document, over all its loads.
type mender struct {
	// left is how many more values copies may hold (maxCopiedNodes).
	left int
}

func newMender() *mender { return &mender{left: maxCopiedNodes} }

// repair mends, in root, the spots a load error names, with a budget of
// its own (see mender.repair).
func repair(root map[string]any, loadErr error) bool {
	return newMender().repair(root, loadErr)
}

// loadMessages are the messages of a load error: one for each spot a
// YAML error names (kin-openapi appends each one's JSON pointer), else
// the error's own. The joined text is not split: a key holding "; "
// would read as a second spot.
func loadMessages(loadErr error) []string {
	var le *yaml.LoadErrors
	if !errors.As(loadErr, &le) || len(le.Errors) == 0 {
		return []string{loadErr.Error()}
	}
	msgs := make([]string, 0, len(le.Errors))
	for _, e := range le.Errors {
		msgs = append(msgs, e.Message)
	}
	return msgs
}

// repairable reports whether a load error names a spot repair may mend.
func repairable(loadErr error) bool {
	for _, msg := range loadMessages(loadErr) {
		if badRef.MatchString(msg) || badField.MatchString(msg) || badNode.MatchString(msg) {
			return true
		}
	}
	return false
}

// repair mends, in root, the spots a load error names, and reports
// whether it changed anything (false: the error stands).
func (md *mender) repair(root map[string]any, loadErr error) bool {
	changed := false
	for _, msg := range loadMessages(loadErr) {
		if m := badRef.FindStringSubmatch(msg); m != nil {
			ref, err := strconv.Unquote(m[1])
			switch {
			case err != nil:
			case m[2] == "response":
				changed = md.answerRef(root, ref) || changed
			default:
				changed = md.replaceRef(root, ref) || changed
			}
		} else if m := badField.FindStringSubmatch(msg); m != nil {
			if field, err := strconv.Unquote(m[1]); err == nil {
				changed = drop(root, m[2]+"/"+escapeToken(field)) || changed
			}
		} else if m := badNode.FindStringSubmatch(msg); m != nil {
			changed = drop(root, m[1]) || changed
		}
	}
	return changed
}

// drop deletes the member at a JSON pointer, and reports whether there
// was one. Only a schema's member goes (a keyword written as the wrong
// type says nothing the import needs): a document whose paths, servers,
// security or parameters the model refuses stays refused, rather than
// imported without them.
func drop(root map[string]any, pointer string) bool {
	toks := pointerTokens(pointer)
	if len(toks) == 0 || !inSchemaAt(toks[:len(toks)-1]) {
		return false
	}
	parent, _ := at(root, toks[:len(toks)-1])
	obj, ok := parent.(map[string]any)
	if !ok {
		return false
	}
	last := toks[len(toks)-1]
	if _, has := obj[last]; !has {
		return false
	}
	delete(obj, last)
	return true
}

// answerRef puts in place of every response {"$ref": ref} in root (a
// member of a "responses" map) a response whose JSON content is what ref
// points to: a response $ref to a schema (`"400": {$ref:
// "#/components/schemas/BadRequest"}`) means a response that holds one.
// Schema $refs to the same place stay as they are.
func (md *mender) answerRef(root map[string]any, ref string) bool {
	target, why := lookup(root, ref)
	if why != "" || !inSchema(ref, target) {
		return md.replaceRef(root, ref)
	}
	changed := false
	rewrite(root, func(x map[string]any) (any, bool) {
		if rs, ok := x["responses"].(map[string]any); ok {
			for code, r := range rs {
				if m, ok := r.(map[string]any); ok && m["$ref"] == ref {
					rs[code] = map[string]any{"description": "", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": ref}}}}
					changed = true
				}
			}
		}
		return nil, false
	})
	return changed
}

// replaceRef puts in place of every {"$ref": ref} in root a copy of the
// schema it points to: a schema inside an operation or in a schema's
// "definitions", which the model cannot follow, or the schema of the
// parameter or response it points to (a schema $ref to a response means
// what the response holds). Where there is none, or the schema holds the
// reference itself, or its copies would go past what md may still copy,
// it puts a marker saying why it cannot be read.
func (md *mender) replaceRef(root map[string]any, ref string) bool {
	target, why := lookup(root, ref)
	if why == "" && !inSchema(ref, target) {
		// A schema $ref to a parameter or a response means its schema.
		target = schemaOf(target)
		if target == nil {
			why = fmt.Sprintf("$ref %q points to something that is not a schema and has none", bound(ref, 200))
		}
	}
	var with map[string]any
	switch {
	case why != "":
		with = map[string]any{unresolvedExt: why}
	case refersTo(root, target, ref):
		with = map[string]any{unresolvedExt: fmt.Sprintf("$ref %q points to a schema that holds itself where the model cannot follow it", bound(ref, 200))}
	default:
		// Every place gets a copy, or none does: which ones would
		// depend on the order a map is walked in.
		places := countRefs(root, ref)
		size := countNodes(target, md.left+1)
		if places > 0 && size > md.left/places {
			with = map[string]any{unresolvedExt: fmt.Sprintf("$ref %q points to a schema the model cannot follow, and a copy of it in each of its %d places would be more than the import copies", bound(ref, 200), places)}
		} else {
			md.left -= places * size
		}
	}
	return replaceEach(root, ref, func() map[string]any {
		if with != nil {
			return with
		}
		return catalog.DeepCopy(target).(map[string]any)
	})
}

// replaceEach puts with() in place of every {"$ref": ref} in root, and
// reports whether there was one.
func replaceEach(root map[string]any, ref string, with func() map[string]any) bool {
	changed := false
	rewrite(root, func(x map[string]any) (any, bool) {
		if r, ok := x["$ref"].(string); ok && r == ref {
			changed = true
			return with(), true
		}
		return nil, false
	})
	return changed
}

// countRefs counts the objects {"$ref": ref} in root.
func countRefs(root map[string]any, ref string) int {
	n := 0
	rewrite(root, func(x map[string]any) (any, bool) {
		if r, ok := x["$ref"].(string); ok && r == ref {
			n++
			return x, true
		}
		return nil, false
	})
	return n
}

// rewrite walks v depth first, to 10,000 levels, calling f on each
// mapping: where f answers (w, true), w takes the mapping's place and is
// not walked into; otherwise the walk goes on into the mapping's members.
// It returns v, or what took its place.
func rewrite(v any, f func(map[string]any) (any, bool)) any {
	var walk func(v any, depth int) any
	walk = func(v any, depth int) any {
		if depth > 10000 {
			return v
		}
		switch x := v.(type) {
		case map[string]any:
			if w, ok := f(x); ok {
				return w
			}
			for k, e := range x {
				x[k] = walk(e, depth+1)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e, depth+1)
			}
		}
		return v
	}
	return walk(v, 0)
}

// countNodes counts the values in v (itself, and each mapping's and
// list's members at any depth), stopping at limit.
func countNodes(v any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n++; n >= limit {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if walk(e); n >= limit {
					return
				}
			}
		case []any:
			for _, e := range x {
				if walk(e); n >= limit {
					return
				}
			}
		}
	}
	walk(v)
	return n
}

// inSchema reports whether ref points into a schema: through a
// "schema" member (an operation's, a parameter's, a media type's), the
// document's "schemas" or a schema's "definitions". A reference to a
// response, a parameter or a header is to no schema.
func inSchema(ref string, target map[string]any) bool {
	if _, param := target["in"]; param {
		return false
	}
	for _, tok := range strings.Split(ref, "/") {
		switch tok {
		case "schema", "schemas", "definitions":
			return true
		}
	}
	return false
}

// schemaOf is the schema of a parameter, a header, a response or a
// request body: its own "schema", or that of its JSON content
// (application/json's, else the first JSON one by name, so that two
// imports of one document agree), or of its only content, or nil.
func schemaOf(obj map[string]any) map[string]any {
	if s, ok := obj["schema"].(map[string]any); ok {
		return s
	}
	content, _ := obj["content"].(map[string]any)
	schema := func(media string) map[string]any {
		m, _ := content[media].(map[string]any)
		s, _ := m["schema"].(map[string]any)
		return s
	}
	if s := schema("application/json"); s != nil {
		return s
	}
	for _, media := range sortedKeys(content) {
		if s := schema(media); s != nil && strings.Contains(strings.ToLower(media), "json") {
			return s
		}
	}
	if len(content) == 1 {
		for media := range content {
			return schema(media)
		}
	}
	return nil
}

// refersTo reports whether v leads to ref: holds it, or holds a
// reference whose target (in root, followed once each) leads to it. A
// copy of a schema that leads back to itself would grow with each load.
func refersTo(root map[string]any, v any, ref string) bool {
	seen := map[string]bool{}
	found := false
	var visit func(x map[string]any) (any, bool)
	visit = func(x map[string]any) (any, bool) {
		if found {
			return x, true
		}
		if r, ok := x["$ref"].(string); ok {
			if r == ref {
				found = true
				return x, true
			}
			if !seen[r] {
				seen[r] = true
				if t, why := lookup(root, r); why == "" {
					rewrite(t, visit)
				}
			}
		}
		return nil, false
	}
	rewrite(v, visit)
	return found
}

// namedMaps are the members whose keys are names the document chooses
// (a parameter called "schema" is no schema keyword).
var namedMaps = []string{"schemas", "parameters", "responses", "headers", "requestBodies", "examples", "links", "callbacks", "securitySchemes", "pathItems", "paths", "content", "encoding", "properties", "patternProperties", "definitions", "$defs", "dependentSchemas"}

// inSchemaAt reports whether the object at toks (a JSON pointer's keys)
// is a schema or inside one: one of the document's schemas, or what a
// "schema" member (a parameter's, a header's, a media type's) holds.
func inSchemaAt(toks []string) bool {
	if len(toks) >= 3 && toks[0] == "components" && toks[1] == "schemas" {
		return true
	}
	for i := 1; i < len(toks); i++ {
		if toks[i] == "schema" && !slices.Contains(namedMaps, toks[i-1]) {
			return true
		}
	}
	return false
}

// pointerTokens are the keys of a JSON pointer ("/a~1b/0": "a/b", "0").
func pointerTokens(pointer string) []string {
	if !strings.HasPrefix(pointer, "/") {
		return nil
	}
	toks := strings.Split(pointer[1:], "/")
	for i, tok := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return toks
}

// escapeToken writes a key as a JSON pointer's token.
func escapeToken(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// at is the value at the keys toks (a mapping's keys, a list's indexes),
// and whether there is one.
func at(root map[string]any, toks []string) (any, bool) {
	var cur any = root
	for _, tok := range toks {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
