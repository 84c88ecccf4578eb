package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// MaxDocumentBytes bounds the documents Read accepts.
const MaxDocumentBytes = 64 << 20

// Document is a parsed OpenAPI description, converted to the 3.x model
// when it was written as Swagger 2.0.
type Document struct {
	// Version is the version the document declared ("2.0", "3.0.3", "3.1.0").
	Version string
	doc     *openapi3.T

	credOnce   sync.Once
	credSpread map[string]bool // credentialSpread's answer, made on first use
}

// unresolvedExt marks, in the parsed model, a $ref that Read could not
// follow: the object that held the $ref is replaced by one carrying only
// this extension, whose value says why. The import skips the operations
// that need such an object and imports the rest.
const unresolvedExt = "x-gateway-unresolved-ref"

// Read parses data as an OpenAPI 3.0 or 3.1 document or a Swagger 2.0 one,
// in YAML or JSON. It is [ReadContext] without a deadline.
func Read(data []byte) (*Document, error) { return ReadContext(context.Background(), data) }

// ReadContext parses data as an OpenAPI 3.0 or 3.1 document or a Swagger
// 2.0 one, in YAML or JSON, and stops with ctx's error when ctx ends.
//
// Nothing is ever fetched. A $ref that does not point into the document
// itself (another file, a URL) or points at nothing in it, and a
// discriminator mapping to another file, is not followed: the object that
// held it is marked, and [Import] skips the operations that need it, with
// the reason, instead of refusing the whole document.
func ReadContext(ctx context.Context, data []byte) (d *Document, err error) {
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("document is %d bytes, more than the %d this import reads", len(data), MaxDocumentBytes)
	}
	defer func() {
		// The document is operator input; a parser bug must cost an error,
		// not the process.
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("cannot parse document: %v", r)
		}
	}()
	// The common case first: an OpenAPI 3 document in JSON whose every
	// reference is local and resolves loads straight into the model, with
	// no tree of plain values beside it (for a 20 MB document, hundreds of
	// megabytes). kin-openapi would parse JSON as YAML first, several
	// times slower, so the JSON is decoded here.
	if doc, version := loadJSON(ctx, data); doc != nil {
		return &Document{Version: version, doc: doc}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Otherwise one parse into plain values, whatever the syntax: YAML is
	// parsed once, non-string keys are made strings, and references are
	// checked on the tree before the model is built.
	tree, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, errors.New("not an OpenAPI document: the top level is not a mapping")
	}
	_, quoted := root["openapi"].(string)
	swagger, oas := version(root, "swagger"), version(root, "openapi")
	if _, has := root["swagger"]; has && swagger == "" {
		return nil, fmt.Errorf("swagger %v is not supported (want \"2.0\")", root["swagger"])
	}
	if _, has := root["openapi"]; has && oas == "" && swagger == "" {
		return nil, fmt.Errorf("openapi %v is not supported (want a version string such as \"3.0.3\")", root["openapi"])
	}
	switch {
	case swagger != "":
		if swagger != "2.0" {
			return nil, fmt.Errorf("swagger %q is not supported (want 2.0)", swagger)
		}
	case oas != "":
		if len(oas) < 2 || oas[:2] != "3." {
			return nil, fmt.Errorf("openapi %q is not supported (want 3.0 or 3.1)", oas)
		}
	default:
		return nil, errors.New("not an OpenAPI document: no top-level \"openapi\" or \"swagger\" field")
	}
	changed, err := markRefs(ctx, root)
	if err != nil {
		return nil, err
	}
	loader := newLoader(ctx)
	if swagger != "" {
		stringInfo(root)
		js, err := json.Marshal(root)
		if err != nil {
			return nil, fmt.Errorf("cannot convert document to JSON: %v", err)
		}
		tree, root = nil, nil // let the plain tree go before the model is built
		var d2 openapi2.T
		if err := json.Unmarshal(js, &d2); err != nil {
			return nil, fmt.Errorf("cannot parse Swagger 2.0 document: %v", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		doc, err := openapi2conv.ToV3WithLoader(&d2, loader, nil)
		if err != nil {
			return nil, fmt.Errorf("cannot convert Swagger 2.0 document: %v", err)
		}
		return &Document{Version: swagger, doc: doc}, nil
	}
	// The tree, written as JSON, is decoded as a JSON document is (see
	// loadJSON): kin-openapi's own YAML decoder costs several times as
	// much, and a 20 MB document minutes.
	if js, err := json.Marshal(root); err == nil {
		if doc := loadModel(ctx, js); doc != nil {
			return &Document{Version: oas, doc: doc}, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// What that refuses is loaded by kin-openapi from YAML, whose decoder
	// takes an unquoted scalar (version: 1) where the model wants a
	// string, as the document was written when nothing had to be marked.
	src := data
	if stringInfo(root) || changed || !quoted || json.Valid(data) {
		if src, err = yaml.Marshal(root); err != nil {
			return nil, fmt.Errorf("cannot convert document: %v", err)
		}
	}
	tree, root = nil, nil // let the plain tree go before the model is built
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	doc, err := loader.LoadFromData(src)
	if err != nil && !errors.Is(err, ctx.Err()) {
		if mended := mend(ctx, data, err); mended != nil {
			return &Document{Version: oas, doc: mended}, nil
		}
	}
	if err != nil {
		var ext *openapi3.DisallowedExternalRefError
		if errors.As(err, &ext) {
			return nil, fmt.Errorf("$ref %q points outside the document; only local references (#/...) are read, never fetched", ext.Ref)
		}
		return nil, fmt.Errorf("cannot load OpenAPI document: %v", err)
	}
	return &Document{Version: oas, doc: doc}, nil
}

// mend loads data once more, each time with the spot the last load
// error named mended (repair), up to maxRepairs times, or returns nil.
func mend(ctx context.Context, data []byte, loadErr error) *openapi3.T {
	if !repairable(loadErr) {
		return nil // not worth parsing the document again
	}
	tree, err := parseTree(data)
	if err != nil {
		return nil
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil
	}
	version(root, "openapi")
	stringInfo(root)
	if _, err := markRefs(ctx, root); err != nil {
		return nil
	}
	md := newMender()
	for range maxRepairs {
		if !md.repair(root, loadErr) || ctx.Err() != nil {
			return nil
		}
		if js, err := json.Marshal(root); err == nil {
			doc, err := resolveModel(ctx, js)
			if doc != nil {
				return doc
			}
			if err != nil && !errors.Is(err, ctx.Err()) {
				// A reference it could not follow, named as a load
				// would name it: a YAML load of a large document costs
				// seconds each time, and only a member of the wrong
				// type needs one to be named.
				loadErr = err
				continue
			}
		}
		src, err := yaml.Marshal(root)
		if err != nil {
			return nil
		}
		doc, err := newLoader(ctx).LoadFromData(src)
		if err == nil {
			return doc
		}
		loadErr = err
	}
	return nil
}

// newLoader is kin-openapi's loader as every load here uses it: it
// follows no reference out of the document and stops with ctx.
func newLoader(ctx context.Context) *openapi3.Loader {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	return loader
}

// stringInfo writes the document's title and version as strings when
// hand-written YAML left them unquoted (version: 1.0): the models want
// strings, and their decoders refuse a number. It reports a change.
func stringInfo(root map[string]any) bool {
	info, _ := root["info"].(map[string]any)
	changed := false
	for _, k := range []string{"title", "version"} {
		switch v := info[k].(type) {
		case int, float64, bool:
			info[k] = fmt.Sprint(v)
			changed = true
		}
	}
	return changed
}

// loadJSON loads data as an OpenAPI 3 document in JSON, or returns nil
// when it is not one or does not load as it is (a reference to follow
// elsewhere, a version written as a number): the caller then reads it
// through the tree, which says why.
func loadJSON(ctx context.Context, data []byte) (*openapi3.T, string) {
	var head struct {
		OpenAPI any `json:"openapi"`
		Swagger any `json:"swagger"`
	}
	if i := bytes.IndexFunc(data, func(r rune) bool { return !unicode.IsSpace(r) }); i < 0 || data[i] != '{' {
		return nil, ""
	}
	if json.Unmarshal(data, &head) != nil || head.Swagger != nil {
		return nil, ""
	}
	version, _ := head.OpenAPI.(string)
	if !strings.HasPrefix(version, "3.") {
		return nil, ""
	}
	return loadModel(ctx, data), version
}

// loadModel decodes data, a valid JSON OpenAPI 3 document, into the model
// and resolves its references, or returns nil when it does not load as it
// is.
func loadModel(ctx context.Context, data []byte) *openapi3.T {
	doc, _ := resolveModel(ctx, data)
	return doc
}

// resolveModel is loadModel, with the resolver's error when the document
// decoded but a reference in it could not be resolved: the error
// kin-openapi's own load would end with, without decoding it again.
func resolveModel(ctx context.Context, data []byte) (*openapi3.T, error) {
	doc := &openapi3.T{}
	refs, err := decodeJSON(data, doc)
	if err != nil || ctx.Err() != nil {
		return nil, nil
	}
	if !preResolve(doc, refs) {
		return nil, nil // a chain that ends nowhere: the tree says where
	}
	if err := newLoader(ctx).ResolveRefsIn(doc, nil); err != nil {
		return nil, err
	}
	return doc, nil
}

// version reads a version field, written as a string or, unquoted in
// YAML, as a number (openapi: 3.1 is the float 3.1 to a YAML parser); a
// number is written back as the string it stood for.
func version(root map[string]any, key string) string {
	switch v := root[key].(type) {
	case string:
		return v
	case float64:
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		root[key] = s
		return s
	case int:
		s := strconv.Itoa(v) + ".0"
		root[key] = s
		return s
	}
	return ""
}

// parseTree parses JSON or YAML into plain values (map[string]any,
// []any, scalars).
func parseTree(data []byte) (any, error) {
	var v any
	if json.Valid(data) {
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("cannot parse document: %v", err)
		}
		return v, nil
	}
	// yaml.v3 refuses documents whose aliases expand excessively, so an
	// alias bomb costs an error, not the memory it describes.
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("cannot parse document: %v", err)
	}
	return stringKeys(v, 0)
}

// stringKeys rewrites the mappings of a YAML tree with non-string keys
// (map[any]any) as map[string]any: Swagger 2.0 and OpenAPI documents
// written by hand key responses by unquoted status codes (200:), which
// YAML reads as integers and JSON cannot hold.
func stringKeys(v any, depth int) (any, error) {
	if depth > 10000 {
		return nil, errors.New("cannot parse document: nested more than 10000 levels")
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e, err := stringKeys(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[k] = e
		}
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			var key string
			switch k := k.(type) {
			case string:
				key = k
			case int:
				key = strconv.Itoa(k)
			case int64, uint64, float64, bool:
				key = fmt.Sprint(k)
			case nil:
				key = "null"
			default:
				return nil, fmt.Errorf("cannot parse document: a mapping key is a %T, not a string", k)
			}
			if _, dup := out[key]; dup {
				return nil, fmt.Errorf("cannot parse document: mapping key %q appears twice", key)
			}
			e, err := stringKeys(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[key] = e
		}
		return out, nil
	case []any:
		for i, e := range x {
			e, err := stringKeys(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[i] = e
		}
		return x, nil
	}
	return v, nil
}

// markRefs walks the document and replaces every object whose "$ref"
// cannot be followed (another file, a URL, a pointer to nothing in the
// document, a loop of references that never reaches a value) by a marker
// saying why, points every reference at the end of its chain (A → B → C,
// where B is only a reference, becomes A → C, so a resolver never walks a
// chain once per link), and drops discriminator mappings to other files
// (they only name which schema a value is, and the import reads the
// schemas themselves). Nothing is fetched.
func markRefs(ctx context.Context, root map[string]any) (changed bool, err error) {
	chains := &refChains{root: root, memo: map[string]refEnd{}}
	steps := 0
	var walk func(v any, depth int) (any, error)
	walk = func(v any, depth int) (any, error) {
		if steps++; steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if depth > 10000 {
			return nil, errors.New("cannot parse document: nested more than 10000 levels")
		}
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				end := chains.end(ref)
				if end.loop {
					end.why = fmt.Sprintf("$ref %q leads into a loop of references that never reaches a value", bound(ref, 200))
				}
				if end.why != "" {
					changed = true
					return map[string]any{unresolvedExt: end.why}, nil
				}
				if end.ref != ref {
					x["$ref"] = end.ref
					changed = true
				}
			}
			if disc, ok := x["discriminator"].(map[string]any); ok {
				if m, ok := disc["mapping"].(map[string]any); ok {
					for k, e := range m {
						if s, ok := e.(string); ok && strings.Contains(s, "/") && !strings.HasPrefix(s, "#") {
							delete(m, k)
							changed = true
						}
					}
				}
			}
			for k, e := range x {
				w, err := walk(e, depth+1)
				if err != nil {
					return nil, err
				}
				x[k] = w
			}
		case []any:
			for i, e := range x {
				w, err := walk(e, depth+1)
				if err != nil {
					return nil, err
				}
				x[i] = w
			}
		}
		return v, nil
	}
	_, err = walk(root, 0)
	return changed, err
}

// refChains finds where chains of references end, each link once.
type refChains struct {
	root map[string]any
	memo map[string]refEnd
}

// refEnd is where a chain of references ends: the last reference (whose
// target is a value, not only another reference), or why it cannot be
// followed, or in a loop.
type refEnd struct {
	ref, why string
	loop     bool
}

// end follows ref through targets that are only a reference (an object
// whose one member is "$ref") to the reference whose target is a value.
func (c *refChains) end(ref string) refEnd {
	if e, ok := c.memo[ref]; ok {
		return e
	}
	var links []string
	on := map[string]bool{}
	var e refEnd
	for cur := ref; ; {
		if known, ok := c.memo[cur]; ok {
			e = known
			break
		}
		if on[cur] {
			e = refEnd{loop: true}
			break
		}
		target, why := lookup(c.root, cur)
		if why != "" {
			e = refEnd{why: why}
			break
		}
		on[cur] = true
		links = append(links, cur)
		next, only := target["$ref"].(string)
		if !only || len(target) != 1 {
			e = refEnd{ref: cur}
			break
		}
		cur = next
	}
	for _, l := range links {
		c.memo[l] = e
	}
	return e
}

// lookup returns the object ref points to inside root, or why it cannot
// be followed.
func lookup(root map[string]any, ref string) (map[string]any, string) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Sprintf("$ref %q points outside the document; only local references (#/...) are read, never fetched", bound(ref, 200))
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil || frag == "" || frag[0] != '/' {
		return nil, fmt.Sprintf("$ref %q is not a JSON pointer into the document", bound(ref, 200))
	}
	cur, found := at(root, pointerTokens(frag))
	if !found {
		return nil, fmt.Sprintf("$ref %q points to nothing in the document", bound(ref, 200))
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("$ref %q points to a value that is not an object", bound(ref, 200))
	}
	return obj, ""
}

// unresolved returns why the object carrying ext could not be read, or "".
func unresolved(ext map[string]any) string {
	why, _ := ext[unresolvedExt].(string)
	return why
}
