package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

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
}

// Read parses data as an OpenAPI 3.0 or 3.1 document or a Swagger 2.0 one,
// in YAML or JSON. Every $ref must be local ("#/..."): a reference to
// another file or a URL is an error, and nothing is ever fetched.
func Read(data []byte) (d *Document, err error) {
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
	var head struct {
		Swagger string `yaml:"swagger" json:"swagger"`
		OpenAPI string `yaml:"openapi" json:"openapi"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("cannot parse document: %v", err)
	}
	switch {
	case head.Swagger != "":
		if head.Swagger != "2.0" {
			return nil, fmt.Errorf("swagger %q is not supported (want 2.0)", head.Swagger)
		}
		js, err := toJSON(data)
		if err != nil {
			return nil, err
		}
		var d2 openapi2.T
		if err := json.Unmarshal(js, &d2); err != nil {
			return nil, fmt.Errorf("cannot parse Swagger 2.0 document: %v", err)
		}
		if err := localRefs(js); err != nil {
			return nil, err
		}
		loader := openapi3.NewLoader()
		loader.IsExternalRefsAllowed = false
		doc, err := openapi2conv.ToV3WithLoader(&d2, loader, nil)
		if err != nil {
			return nil, fmt.Errorf("cannot convert Swagger 2.0 document: %v", err)
		}
		return &Document{Version: head.Swagger, doc: doc}, nil
	case head.OpenAPI != "":
		if len(head.OpenAPI) < 2 || head.OpenAPI[:2] != "3." {
			return nil, fmt.Errorf("openapi %q is not supported (want 3.0 or 3.1)", head.OpenAPI)
		}
		loader := openapi3.NewLoader()
		loader.IsExternalRefsAllowed = false
		doc, err := loader.LoadFromData(data)
		if err != nil {
			var ext *openapi3.DisallowedExternalRefError
			if errors.As(err, &ext) {
				return nil, fmt.Errorf("$ref %q points outside the document; only local references (#/...) are read, never fetched", ext.Ref)
			}
			return nil, fmt.Errorf("cannot load OpenAPI document: %v", err)
		}
		return &Document{Version: head.OpenAPI, doc: doc}, nil
	}
	return nil, errors.New("not an OpenAPI document: no top-level \"openapi\" or \"swagger\" field")
}

// toJSON converts YAML (of which JSON is a subset) to JSON bytes.
func toJSON(data []byte) ([]byte, error) {
	if json.Valid(data) {
		return data, nil
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("cannot parse document: %v", err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cannot convert document to JSON: %v", err)
	}
	return js, nil
}

// localRefs refuses any "$ref" that is not a JSON pointer into the document
// itself (Swagger 2.0 goes through a converter that would otherwise try to
// load them).
func localRefs(js []byte) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	prevRef := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // end of input (the document already decoded once)
		}
		s, isString := tok.(string)
		if prevRef && isString && (len(s) == 0 || s[0] != '#') {
			return fmt.Errorf("$ref %q points outside the document; only local references (#/...) are read, never fetched", s)
		}
		prevRef = isString && s == "$ref" && !prevRef
	}
}
