package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// propertyDefaults returns the JSON Schema default of each top-level
// property of input that has one (a call applies them to absent
// arguments). Each is decoded as a caller's argument would be (numbers as
// json.Number) and checked against its property's compiled schema, since
// it is sent upstream without passing the call's validation. Nested
// defaults (inside an object property or array items) are not collected:
// a default fills an absent argument, never part of a present one.
func propertyDefaults(input map[string]any, v Validator) (map[string]any, []*schemaError) {
	props, _ := input["properties"].(map[string]any)
	var out map[string]any
	var errs []*schemaError
	for _, name := range slices.Sorted(maps.Keys(props)) {
		sub, _ := props[name].(map[string]any)
		def, ok := sub["default"]
		if !ok {
			continue
		}
		loc := []string{"properties", name, "default"}
		js, err := marshalJSON(def)
		if err != nil {
			errs = append(errs, &schemaError{loc: loc, msg: "default: " + err.Error()})
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			errs = append(errs, &schemaError{loc: loc, msg: "default: " + err.Error()})
			continue
		}
		if is, ok := v.(inputSchema); ok {
			s, err := is.schema()
			if err != nil {
				errs = append(errs, &schemaError{loc: loc, msg: oneLine(err.Error())})
				continue
			}
			if ps := s.Properties[name]; ps != nil {
				if err := ps.Validate(x); err != nil {
					msg := oneLine(err.Error())
					var ve *jsonschema.ValidationError
					if errors.As(err, &ve) {
						msg = explain(ve).Msg
					}
					errs = append(errs, &schemaError{loc: loc, msg: "default " + jsonText(x) + " of argument " + strconv.Quote(name) + " does not pass its own schema: " + msg})
					continue
				}
			}
		}
		if out == nil {
			out = map[string]any{}
		}
		out[name] = x
	}
	return out, errs
}
