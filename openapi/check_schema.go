package openapi

import (
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, errors.New("remote schemas are not loaded")
}

func compile(s map[string]any) (*jsonschema.Schema, error) {
	v, ok := jsonValue(s)
	if !ok {
		// Too big for a value: compile the tree as it is.
		v = s
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource("mem:///schema.json", v); err != nil {
		return nil, err
	}
	return c.Compile("mem:///schema.json")
}

// checkSchema returns why s is not a valid JSON Schema 2020-12, or "".
func checkSchema(s map[string]any) string {
	if _, err := compile(s); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		return bound(msg, 200)
	}
	return ""
}

// dropBadDefaults removes top-level property defaults their own schema
// refuses (the catalog refuses them at load).
func dropBadDefaults(props map[string]any, c *converter) {
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		def, has := p["default"]
		if !has {
			continue
		}
		sch, err := compile(p)
		if err == nil {
			err = sch.Validate(def)
		}
		if err != nil {
			delete(p, "default")
			c.note("default of %q dropped: it breaks its own schema", name)
		}
	}
}
