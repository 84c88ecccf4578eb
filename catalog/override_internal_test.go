package catalog

import "testing"

// fieldRoot names the tool or override field a recorded position belongs
// to, so that an override's positions replace exactly the tool's field.
func TestFieldRoot(t *testing.T) {
	for in, want := range map[string]string{
		"tools[3].requires[0]":                       "tools[3].requires",
		"tools[12].output_schema.properties.id.type": "tools[12].output_schema",
		"tools[3].tags":                              "tools[3].tags",
		"tools[3]":                                   "",
		"overrides.list_pets.requires[1]":            "overrides.list_pets.requires",
		`overrides["a.b"].output_schema.type`:        `overrides["a.b"].output_schema`,
		"overrides.x":                                "",
		"upstreams.pets.headers.Authorization":       "",
		"tools[3].requires_x":                        "tools[3].requires_x",
		"overrides.list_pets.output_schema.keep[0]":  "overrides.list_pets.output_schema",
	} {
		if got := fieldRoot(in); got != want {
			t.Errorf("fieldRoot(%q) = %q, want %q", in, got, want)
		}
	}
}
