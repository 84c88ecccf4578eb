package catalog

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// quick is a compiled schema's fast check. For the shapes tool schemas
// usually have (typed properties, required members, closed objects,
// string enums, lengths, patterns, integer bounds, arrays of these) it
// tells whether a value is certainly valid without the validator, which
// tracks locations and evaluated members and allocates on every call.
//
// It never says valid when the validator would not. A schema with any
// keyword it does not check has no quick form (nil), and a value it
// cannot judge exactly (a fraction against a bound, an integer written
// 1.0, a Go type JSON does not decode to) is not certainly valid: the
// validator then decides, and words the error.
type quick struct {
	never              bool  // the false schema
	types              uint8 // a set of jsonKind bits; 0: any type
	enum               []any // strings, booleans and nulls; nil: no enum
	required           []string
	props              map[string]*quick
	closed             bool   // additionalProperties: false
	extra              *quick // additionalProperties as a schema; nil: any member
	items              *quick // nil: any item
	minItems, maxItems int    // -1: none
	minLen, maxLen     int    // -1: none
	pattern            jsonschema.Regexp
	bounds             []bound // numeric bounds, each exact in float64
}

type jsonKind = uint8

const (
	kindNull jsonKind = 1 << iota
	kindBool
	kindNumber
	kindInteger
	kindString
	kindArray
	kindObject
)

var kindNames = map[string]jsonKind{"null": kindNull, "boolean": kindBool, "number": kindNumber,
	"integer": kindInteger, "string": kindString, "array": kindArray, "object": kindObject}

// bound is minimum (op 0), maximum (1), exclusiveMinimum (2) or
// exclusiveMaximum (3).
type bound struct {
	op int
	v  float64
}

// quickFields are the Schema fields a quick form may have set: those it
// checks, and those that assert nothing. Any other field set (allOf,
// $ref, format, uniqueItems, one added by a later version of the
// library…) means the schema has no quick form.
var quickFields = map[string]bool{
	"DraftVersion": true, "Location": true, "ID": true, "Anchor": true, "DynamicAnchor": true, "RecursiveAnchor": true,
	"Title": true, "Description": true, "Default": true, "Comment": true, "ReadOnly": true, "WriteOnly": true, "Examples": true, "Deprecated": true,
	"Bool": true, "Types": true, "Enum": true, "Extensions": true,
	"Required": true, "Properties": true, "AdditionalProperties": true,
	"Items2020": true, "MinItems": true, "MaxItems": true,
	"MinLength": true, "MaxLength": true, "Pattern": true,
	"Minimum": true, "Maximum": true, "ExclusiveMinimum": true, "ExclusiveMaximum": true,
}

// quickOf returns s's quick form, or nil when it has none.
func quickOf(s *jsonschema.Schema) *quick {
	if s == nil || s.DraftVersion != 2020 {
		return nil
	}
	rv := reflect.ValueOf(s).Elem()
	for _, f := range reflect.VisibleFields(rv.Type()) {
		if f.IsExported() && !quickFields[f.Name] && !rv.FieldByIndex(f.Index).IsZero() {
			return nil
		}
	}
	q := &quick{minItems: -1, maxItems: -1, minLen: -1, maxLen: -1, pattern: s.Pattern}
	if s.Bool != nil {
		q.never = !*s.Bool
		return q
	}
	if s.Types != nil {
		for _, name := range s.Types.ToStrings() {
			q.types |= kindNames[name]
		}
	}
	// The only extension allowed is the int64 rule, which number keeps:
	// where it binds, number admits only plain integers of 15 digits.
	for _, x := range s.Extensions {
		if _, ok := x.(int64Rule); !ok {
			return nil
		}
	}
	if s.Enum != nil {
		q.enum = []any{}
		for _, v := range s.Enum.Values {
			switch v.(type) {
			case string, bool, nil:
				q.enum = append(q.enum, v)
			default:
				return nil // numbers compare by value, objects deeply: the validator's
			}
		}
	}
	q.required = s.Required
	if len(s.Properties) > 0 {
		q.props = make(map[string]*quick, len(s.Properties))
		for name, ps := range s.Properties {
			if q.props[name] = quickOf(ps); q.props[name] == nil {
				return nil
			}
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		q.closed = !a
	case *jsonschema.Schema:
		if q.extra = quickOf(a); q.extra == nil {
			return nil
		}
	default:
		return nil
	}
	if s.Items2020 != nil {
		if q.items = quickOf(s.Items2020); q.items == nil {
			return nil
		}
	}
	for _, c := range []struct {
		p   *int
		dst *int
	}{{s.MinItems, &q.minItems}, {s.MaxItems, &q.maxItems}, {s.MinLength, &q.minLen}, {s.MaxLength, &q.maxLen}} {
		if c.p != nil {
			*c.dst = *c.p
		}
	}
	for op, r := range []*big.Rat{s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum} {
		if r == nil {
			continue
		}
		v, exact := r.Float64()
		if !exact || math.Abs(v) > 1<<53 {
			return nil
		}
		q.bounds = append(q.bounds, bound{op, v})
	}
	return q
}

// valid reports whether v is certainly valid; false means the validator
// must decide, as it must for a schema with no quick form (q nil).
func (q *quick) valid(v any) bool {
	if q == nil || q.never {
		return false
	}
	if q.enum != nil && !q.inEnum(v) {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		return q.admits(kindObject) && q.object(v)
	case []any:
		return q.admits(kindArray) && q.array(v)
	case string:
		return q.admits(kindString) && q.str(v)
	case json.Number:
		return q.number(v)
	case bool:
		return q.admits(kindBool)
	case nil:
		return q.admits(kindNull)
	}
	return false
}

func (q *quick) admits(k jsonKind) bool { return q.types == 0 || q.types&k != 0 }

func (q *quick) inEnum(v any) bool {
	switch v.(type) {
	case string, bool, nil:
		for _, e := range q.enum {
			if e == v {
				return true
			}
		}
	}
	return false
}

func (q *quick) object(m map[string]any) bool {
	for _, name := range q.required {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	for name, v := range m {
		if p, ok := q.props[name]; ok {
			if !p.valid(v) {
				return false
			}
			continue
		}
		if q.closed || (q.extra != nil && !q.extra.valid(v)) {
			return false
		}
	}
	return true
}

func (q *quick) array(a []any) bool {
	if (q.minItems >= 0 && len(a) < q.minItems) || (q.maxItems >= 0 && len(a) > q.maxItems) {
		return false
	}
	if q.items != nil {
		for _, v := range a {
			if !q.items.valid(v) {
				return false
			}
		}
	}
	return true
}

func (q *quick) str(s string) bool {
	if q.minLen >= 0 || q.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if (q.minLen >= 0 && n < q.minLen) || (q.maxLen >= 0 && n > q.maxLen) {
			return false
		}
	}
	return q.pattern == nil || q.pattern.MatchString(s)
}

// number judges a JSON number. Only a plain integer of at most 15
// digits, exact in float64 and within int64, is judged against integer
// types and bounds; any other number is certainly valid only where
// every number is (type number or none, no bounds).
func (q *quick) number(n json.Number) bool {
	i, plain := plainInteger(string(n))
	if !plain {
		return q.admits(kindNumber) && len(q.bounds) == 0
	}
	if !q.admits(kindNumber) && !q.admits(kindInteger) {
		return false
	}
	f := float64(i)
	for _, b := range q.bounds {
		ok := true
		switch b.op {
		case 0:
			ok = f >= b.v
		case 1:
			ok = f <= b.v
		case 2:
			ok = f > b.v
		case 3:
			ok = f < b.v
		}
		if !ok {
			return false
		}
	}
	return true
}

// plainInteger parses s when it is -?[0-9]{1,15} without a leading zero.
func plainInteger(s string) (int64, bool) {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || (d[0] == '0' && len(d) > 1) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}
