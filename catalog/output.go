package catalog

// output_schema, tags and search_hint: fields an imported tool carries.

import (
	"cmp"
	"strings"
)

// MaxSearchHint bounds a tool's search_hint, in bytes: a few sentences.
const MaxSearchHint = 1000

// tags checks a tool's tags are non-empty names and its search_hint is
// within its bound.
func (tc *toolCheck) tags() {
	for i, g := range tc.t.Tags {
		if g == "" {
			tc.add(first(tc.pos[childIndex(tc.path+".tags", i)], tc.t.At("tags")), tc.subj, "tags must not be empty")
		}
	}
	if n := len(tc.t.SearchHint); n > MaxSearchHint {
		tc.add(tc.t.At("search_hint"), tc.subj, "search_hint is %d bytes, more than %d: a few words or sentences that help a search find the tool", n, MaxSearchHint)
	}
}

// output checks and compiles output_schema: a JSON Schema whose root is
// type: object, since MCP's outputSchema describes structuredContent,
// which is always an object (an array result is wrapped as {items}).
func (tc *toolCheck) output() {
	t := tc.t
	if t.OutputSchema == nil {
		return
	}
	base := tc.path + ".output_schema"
	at := first(tc.pos[base], t.At("output_schema"))
	if typ, _ := t.OutputSchema["type"].(string); typ != "object" {
		tc.add(first(tc.pos[base+".type"], at), tc.subj, "output_schema must be a JSON Schema with type: object at its root (an array result is {items: [...]})")
		return
	}
	if t.Response.Render == RenderPayload {
		tc.add(at, tc.subj, "output_schema does not apply to render: payload (its result is {encoding, content, truncated, byteCount})")
		return
	}
	_, _, errs := compileSchema(t.OutputSchema, "catalog:///"+tc.path+"/output.json")
	for _, e := range errs {
		tc.add(first(tc.schemaPos(base, e.loc), at), tc.subj, "output_schema: %s", e.msg)
	}
	if errs != nil {
		return
	}
	// Published and enforced: the operator's schema plus the members the
	// gateway may add (outputcheck.go). The operator's compiled above, so
	// problems point into what was written.
	// Both are checked here, as the operator's is (the advertised one
	// nests the strict one under anyOf, where a $ref to the root's $defs
	// would dangle), and compiled for use on first use (lazySchema).
	// A schema with no keyword starting with "$" ($ref, $defs, $id,
	// $schema, $anchor, $dynamicRef, ...) has nothing that moving it under
	// anyOf or widening a member to null can break: the gateway's members
	// are valid schemas of its own, and what it wraps was just found
	// valid. Such schemas, most of an imported catalog's, skip the second
	// and third check, which cost a catalog of thousands of tools most of
	// its start.
	strict := publishedOutput(t)
	advertised := advertisedOutput(t, strict)
	if !hasDollarKey(t.OutputSchema) {
		ps, ajs, perr := deferSchema(strict, "catalog:///"+tc.path+"/output.json")
		var aerr error
		if t.Kind == KindWrite || t.Response.NotFound != nil { // else advertised is strict
			_, ajs, aerr = deferSchema(advertised, "catalog:///"+tc.path+"/advertised.json")
		}
		if err := cmp.Or(perr, aerr); err != nil {
			tc.add(at, tc.subj, "output_schema with the gateway's own members: %s", err)
			return
		}
		t.Output, t.OutputJSON = outputSchema{ps}, ajs
		return
	}
	pv, _, perrs := compileSchema(strict, "catalog:///"+tc.path+"/output.json")
	_, ajs, aerrs := compileSchema(advertised, "catalog:///"+tc.path+"/advertised.json")
	for _, e := range append(perrs, aerrs...) {
		tc.add(at, tc.subj, "output_schema with the gateway's own members: %s", e.msg)
	}
	ps, ok := pv.(inputSchema)
	if !ok || perrs != nil || aerrs != nil {
		return
	}
	t.Output, t.OutputJSON = outputSchema{ps.lazySchema}, ajs
}

// hasDollarKey reports whether a decoded schema holds an object member
// whose name starts with "$" anywhere (a property named "$top" counts
// too: it only costs the full check).
func hasDollarKey(x any) bool {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if strings.HasPrefix(k, "$") || hasDollarKey(v) {
				return true
			}
		}
	case []any:
		for _, v := range x {
			if hasDollarKey(v) {
				return true
			}
		}
	}
	return false
}
