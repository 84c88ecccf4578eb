package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ArgumentError says which argument failed a tool's input schema and why,
// in one line a model can act on.
type ArgumentError struct {
	// Field is the argument at fault, dotted and indexed for nested values
	// ("filter.tags[2]"); "" when the arguments as a whole are at fault.
	Field string
	// Msg is the rule that failed, e.g. `value must be one of "a", "b"`.
	Msg string

	depth int // len of the instance location, to pick the deepest failure
}

// Msg values with a wording of their own in Error.
const (
	msgUnexpected = "unexpected argument"
	msgMissing    = "missing required argument"
)

func (e *ArgumentError) Error() string {
	switch {
	case e.Field == "":
		return "arguments: " + e.Msg
	case e.Msg == msgUnexpected:
		return fmt.Sprintf("unexpected argument %q", e.Field)
	}
	return fmt.Sprintf("argument %q: %s", e.Field, e.Msg)
}

// inputSchema is a compiled tool input schema. It is immutable and safe
// for concurrent use.
type inputSchema struct{ *lazySchema }

// Validate checks arguments decoded by encoding/json (json.Number or
// float64 numbers). Nil stands for no arguments, an empty object. The
// error, when there is one, is an *[ArgumentError] for the deepest failure.
func (v inputSchema) Validate(args any) error {
	if args == nil {
		args = map[string]any{}
	}
	s, err := v.schema()
	if err != nil {
		return &ArgumentError{Msg: "the tool's input schema cannot be used: " + oneLine(err.Error())}
	}
	if v.q.valid(args) {
		return nil
	}
	err = s.Validate(args)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Msg: oneLine(err.Error())}
	}
	return explain(ve)
}

// explain returns the most specific failure under e: the deepest leaf,
// the first when several tie, except that alternatives (anyOf, oneOf)
// failing at the alternative's own place are joined with "or".
func explain(e *jsonschema.ValidationError) *ArgumentError {
	if len(e.Causes) == 0 {
		return argumentError(e)
	}
	var best *ArgumentError
	var alts []string
	for _, c := range e.Causes {
		a := explain(c)
		if best == nil || a.depth > best.depth {
			best = a
		}
		if a.depth == len(e.InstanceLocation) && a.Field == fieldName(e.InstanceLocation) && !slices.Contains(alts, a.Msg) {
			alts = append(alts, a.Msg)
		}
	}
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if len(alts) == len(e.Causes) && len(alts) > 1 {
			return &ArgumentError{Field: best.Field, Msg: strings.Join(alts, ", or "), depth: best.depth}
		}
	}
	return best
}

var printer = message.NewPrinter(language.English)

func argumentError(e *jsonschema.ValidationError) *ArgumentError {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return &ArgumentError{Field: fieldName(append(slices.Clip(loc), k.Missing[0])), Msg: msgMissing, depth: len(loc) + 1}
	case *kind.AdditionalProperties:
		return &ArgumentError{Field: fieldName(append(slices.Clip(loc), k.Properties[0])), Msg: msgUnexpected, depth: len(loc) + 1}
	}
	return &ArgumentError{Field: fieldName(loc), Msg: ruleText(e.ErrorKind), depth: len(loc)}
}

// fieldName renders an instance location as filter.tags[2].
func fieldName(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// ruleText words the common failures for a caller; the library's own
// wording serves the rest.
func ruleText(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("want %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		return "value must be one of " + listValues(k.Want)
	case *kind.Const:
		return "value must be " + jsonText(k.Want)
	case *kind.FalseSchema:
		return "not allowed"
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long", k.Want)
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %q", k.Want)
	case *kind.Minimum:
		return "must be at least " + k.Want.RatString()
	case *kind.Maximum:
		return "must be at most " + k.Want.RatString()
	case *kind.ExclusiveMinimum:
		return "must be greater than " + k.Want.RatString()
	case *kind.ExclusiveMaximum:
		return "must be less than " + k.Want.RatString()
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items", k.Want)
	}
	return oneLine(k.LocalizedString(printer))
}

// listValues lists enum values as JSON, at most ten of them.
func listValues(vs []any) string {
	const max = 10
	var parts []string
	for i, v := range vs {
		if i == max {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(vs)-max))
			break
		}
		parts = append(parts, jsonText(v))
	}
	return strings.Join(parts, ", ")
}

func jsonText(v any) string {
	b, err := marshalJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// marshalJSON encodes v compactly, with sorted keys and without HTML
// escaping (a description saying "a < b" stays readable).
func marshalJSON(v any) ([]byte, error) {
	if b, ok := appendJSON(nil, v); ok {
		return b, nil
	}
	return marshalJSONSlow(v)
}

// marshalJSONSlow is marshalJSON by encoding/json, for what appendJSON
// does not write.
func marshalJSONSlow(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// refuseLoader refuses every $ref outside the schema itself: loading one
// would make validation reach the network or the file system.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, errors.New("schemas outside the catalog are never loaded")
}

// schemaError is a problem in an input schema, at a location inside it.
type schemaError struct {
	loc []string // path inside the schema
	msg string
}

// compileSchema compiles a tool's input schema as JSON Schema 2020-12
// (unless it names another draft in $schema) and returns it with its
// compact JSON. Formats are asserted, so "format: date-time" is a rule.
func compileSchema(input map[string]any, id string) (Validator, []byte, []*schemaError) {
	js, err := marshalJSON(input)
	if err != nil {
		return nil, nil, []*schemaError{{msg: err.Error()}}
	}
	if !plainSchema(input) {
		if errs := checkSchema(js, id); errs != nil {
			return nil, nil, errs
		}
	}
	return inputSchema{&lazySchema{id: id, js: js}}, js, nil
}

// checkSchema checks a schema's JSON with a compiler of its own, unless
// the same text was found valid before, and records it as valid.
func checkSchema(js []byte, id string) []*schemaError {
	sum := sha256.Sum256(js)
	compilers.Lock()
	known := compilers.valid[sum]
	compilers.Unlock()
	if known {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return []*schemaError{{msg: err.Error()}}
	}
	// A compiler of its own: one kept between schemas would resolve a
	// $ref into another tool's schema at load that the compile for use
	// (lazySchema, also a compiler of its own) then refuses.
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	if err = c.AddResource(id, doc); err == nil {
		_, err = c.Compile(id)
	}
	if err != nil {
		return schemaErrors(err)
	}
	compilers.Lock()
	if compilers.valid == nil || len(compilers.valid) >= maxValidSchemas {
		compilers.valid = map[[sha256.Size]byte]bool{}
	}
	compilers.valid[sum] = true
	compilers.Unlock()
	return nil
}

// checkSchemasInParallel checks the input and output schemas of a large
// catalog's tools on every CPU, ahead of the tool-by-tool checks, which
// then find the valid ones among the digests already checked. Each schema
// still gets a compiler of its own, under the id its tool's check uses;
// an invalid one is left for that check to report. Checking schemas is
// most of the time a catalog of thousands of tools takes to load.
func checkSchemasInParallel(tools []*Tool) {
	workers := min(runtime.GOMAXPROCS(0), len(tools)/minToolsPerWorker)
	if workers < 2 {
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tools) {
					return
				}
				path := "catalog:///" + childIndex("tools", i)
				for _, s := range []struct {
					schema map[string]any
					id     string
				}{{tools[i].Input, path + "/input.json"}, {tools[i].OutputSchema, path + "/output.json"}} {
					if s.schema == nil || plainSchema(s.schema) {
						continue // a plain schema needs no compile
					}
					if js, err := marshalJSON(s.schema); err == nil {
						checkSchema(js, s.id)
					}
				}
			}
		})
	}
	wg.Wait()
}

// minToolsPerWorker keeps small catalogs, whose check takes milliseconds,
// on one goroutine.
const minToolsPerWorker = 32

// deferSchema is compileSchema for a schema known to be valid (the
// gateway's own additions to a schema compileSchema accepted): nothing is
// compiled until it is first used.
func deferSchema(m map[string]any, id string) (*lazySchema, []byte, error) {
	js, err := marshalJSON(m)
	if err != nil {
		return nil, nil, err
	}
	return &lazySchema{id: id, js: js}, js, nil
}

// lazySchema is a schema checked at load and compiled for use on its
// first validation. Compiling every tool's schemas at load cost a catalog
// of thousands of imported tools most of its start time and memory, for
// tools most of which are never called.
type lazySchema struct {
	id   string
	js   []byte // the schema as JSON, shared with what is published
	once sync.Once
	s    *jsonschema.Schema
	q    *quick // s's fast check; nil when s has none
	err  error
}

// schema compiles the schema with the int64 rule, once. A registered
// vocabulary replaces the draft's metaschema by the vocabularies' own,
// which check less: the check with the metaschema was done at load.
func (l *lazySchema) schema() (*jsonschema.Schema, error) {
	l.once.Do(func() {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		c.UseLoader(refuseLoader{})
		c.RegisterVocabulary(int64Vocabulary)
		c.AssertVocabs()
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(l.js))
		if l.err = err; err == nil {
			if l.err = c.AddResource(l.id, doc); l.err == nil {
				l.s, l.err = c.Compile(l.id)
				l.q = quickOf(l.s)
			}
		}
		l.js = nil
	})
	return l.s, l.err
}

// compilers keeps the digests of schemas found valid, between loads (a
// reload, the import's self-check batches) up to maxValidSchemas: an
// imported catalog repeats its entities' schemas across tools (a get, an
// update and a create answer the same object), and whether a schema is
// valid depends on its text alone, each being checked by a compiler of
// its own that fetches nothing.
var compilers struct {
	sync.Mutex
	valid map[[sha256.Size]byte]bool
}

// maxValidSchemas bounds compilers.valid: 64Ki digests, 2 MiB.
const maxValidSchemas = 1 << 16

// int64Vocabulary adds one rule to every schema whose type admits integers
// but not all numbers: the value must fit int64. JSON Schema's integers
// are unbounded, so without it 1e19 or 1e300 would pass `type: integer`
// and reach an upstream that reads 64-bit integers. It has no
// keyword of its own.
var int64Vocabulary = &jsonschema.Vocabulary{
	URL: "urn:mcpgw:vocab:int64",
	Compile: func(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
		var types []any
		switch t := obj["type"].(type) {
		case string:
			types = []any{t}
		case []any:
			types = t
		}
		if slices.Contains(types, any("integer")) && !slices.Contains(types, any("number")) {
			return int64Rule{}, nil
		}
		return nil, nil
	},
}

type int64Rule struct{}

func (int64Rule) Validate(ctx *jsonschema.ValidatorContext, v any) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		if _, err := n.Int64(); err == nil {
			return
		}
		if !strings.ContainsAny(string(n), ".eE") {
			ctx.AddError(outsideInt64{}) // an integer literal Int64 refused
			return
		}
		var err error
		if f, err = n.Float64(); err != nil {
			return // not finite: the caller refuses those before validating
		}
	case float64:
		f = n
	default:
		return
	}
	if f == math.Trunc(f) && (f < -(1<<63) || f >= 1<<63) {
		ctx.AddError(outsideInt64{})
	}
}

// outsideInt64 is the failure of int64Rule.
type outsideInt64 struct{}

func (outsideInt64) KeywordPath() []string { return []string{"type"} }

func (outsideInt64) LocalizedString(*message.Printer) string {
	return "must be an integer from -9223372036854775808 to 9223372036854775807"
}

// schemaErrors words a compile failure as one error per place in the
// schema: the metaschema's verdict walked down to its leaves, keeping the
// first leaf at each location and only the deepest of nested locations.
func schemaErrors(err error) []*schemaError {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	var lue *jsonschema.LoadURLError
	switch {
	case errors.As(err, &sve) && errors.As(sve.Err, &ve):
		var leaves []*jsonschema.ValidationError
		collectLeaves(ve, &leaves)
		var out []*schemaError
		for i, l := range leaves {
			if slices.ContainsFunc(leaves[:i], func(o *jsonschema.ValidationError) bool {
				return slices.Equal(o.InstanceLocation, l.InstanceLocation)
			}) || slices.ContainsFunc(leaves, func(o *jsonschema.ValidationError) bool {
				return len(o.InstanceLocation) > len(l.InstanceLocation) && slices.Equal(o.InstanceLocation[:len(l.InstanceLocation)], l.InstanceLocation)
			}) {
				continue
			}
			out = append(out, metaschemaError(l))
		}
		return out
	case errors.As(err, &lue):
		return []*schemaError{{msg: fmt.Sprintf("$ref %q: only references inside the schema are allowed", strings.TrimPrefix(lue.URL, "catalog:///"))}}
	}
	return []*schemaError{{msg: oneLine(err.Error())}}
}

func collectLeaves(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if len(e.Causes) == 0 {
		*out = append(*out, e)
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

func metaschemaError(leaf *jsonschema.ValidationError) *schemaError {
	msg := ruleText(leaf.ErrorKind)
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		msg = fmt.Sprintf("missing %q", k.Missing[0])
	case *kind.AdditionalProperties:
		msg = fmt.Sprintf("unexpected %q", k.Properties[0])
	}
	at := ""
	if len(leaf.InstanceLocation) > 0 {
		at = " at " + strings.Join(leaf.InstanceLocation, ".")
	}
	return &schemaError{loc: leaf.InstanceLocation, msg: "not a valid JSON Schema" + at + ": " + msg}
}
