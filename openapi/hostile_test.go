package openapi_test

import (
	"fmt"
	"strings"
)

// Hostile documents, generated: each is small on disk and large once its
// references are followed.

// fanOutDoc is n schemas deep, each with width properties that all refer
// to the next schema: width^depth schema nodes once expanded. A read and
// a write use the first schema, so both the input and the output
// converters meet it.
func fanOutDoc(width, depth int) string {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: fan-out, version: '1'}\npaths:\n")
	b.WriteString("  /things:\n")
	b.WriteString("    get:\n      operationId: listThings\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/S0'}}}}\n")
	b.WriteString("    post:\n      operationId: createThing\n      requestBody: {required: true, content: {application/json: {schema: {$ref: '#/components/schemas/S0'}}}}\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/S0'}}}}\n")
	b.WriteString("components:\n  schemas:\n")
	for i := range depth {
		fmt.Fprintf(&b, "    S%d:\n      type: object\n      properties:\n", i)
		for j := range width {
			if i == depth-1 {
				fmt.Fprintf(&b, "        p%d: {type: string, description: leaf %d}\n", j, j)
			} else {
				fmt.Fprintf(&b, "        p%d: {$ref: '#/components/schemas/S%d'}\n", j, i+1)
			}
		}
	}
	return b.String()
}

// anyOfDoc is the same fan-out through anyOf (and allOf/oneOf below it),
// the keywords whose branches a converter must also follow.
func anyOfDoc(width, depth int) string {
	var b strings.Builder
	b.WriteString("openapi: 3.1.0\ninfo: {title: any-of, version: '1'}\npaths:\n")
	b.WriteString("  /things:\n    post:\n      operationId: createThing\n      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/S0'}}}}\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {type: object, properties: {x: {$ref: '#/components/schemas/S0'}}}}}}\n")
	b.WriteString("components:\n  schemas:\n")
	kws := []string{"anyOf", "oneOf", "allOf"}
	for i := range depth {
		fmt.Fprintf(&b, "    S%d:\n      %s:\n", i, kws[i%3])
		for j := range width {
			if i == depth-1 {
				fmt.Fprintf(&b, "        - {type: object, properties: {v%d: {type: integer}}}\n", j)
			} else {
				fmt.Fprintf(&b, "        - {$ref: '#/components/schemas/S%d'}\n", i+1)
			}
		}
	}
	return b.String()
}

// wideDoc has ops operations that all use one shared schema of width
// properties, each an object of width properties, each with a long enum:
// no single schema is deep, but the document is wide everywhere.
func wideDoc(ops, width, enum int) string {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: wide, version: '1'}\npaths:\n")
	for i := range ops {
		fmt.Fprintf(&b, "  /w%d/{id}:\n    get:\n      operationId: getW%d\n      parameters: [{name: id, in: path, required: true, schema: {$ref: '#/components/schemas/Id'}}]\n", i, i)
		b.WriteString("      responses:\n        '200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Wide'}}}}\n")
		fmt.Fprintf(&b, "    put:\n      operationId: putW%d\n      parameters: [{name: id, in: path, required: true, schema: {type: string}}]\n", i)
		b.WriteString("      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/Wide'}}}}\n      responses: {'204': {description: ok}}\n")
	}
	b.WriteString("components:\n  schemas:\n    Id: {type: string}\n    Enum:\n      type: string\n      enum: [")
	for j := range enum {
		if j > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "e%d", j)
	}
	b.WriteString("]\n    Inner:\n      type: object\n      properties:\n")
	for j := range width {
		fmt.Fprintf(&b, "        q%d: {$ref: '#/components/schemas/Enum'}\n", j)
	}
	b.WriteString("    Wide:\n      type: object\n      properties:\n")
	for j := range width {
		fmt.Fprintf(&b, "        p%d: {$ref: '#/components/schemas/Inner'}\n", j)
	}
	return b.String()
}

// graphLikeDoc is shaped like Microsoft Graph's description, generated:
// ops operations (reads and writes in equal parts) over entities shared
// schemas, each an allOf of a base entity and fields fields, a third of
// them references to other entities (so the schemas form one deep,
// recursive web), with collection answers wrapping arrays.
func graphLikeDoc(ops, entities, fields int) string {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.4","info":{"title":"graph-like","version":"v1.0"},"servers":[{"url":"https://graph.example.com/v1.0"}],"paths":{`)
	for i := range ops / 4 {
		e := i % entities
		if i > 0 {
			b.WriteString(",")
		}
		ref := fmt.Sprintf(`{"$ref":"#/components/schemas/e%d"}`, e)
		fmt.Fprintf(&b, `"/g%d/e%d":{"get":{"operationId":"g%d.e%d.List","summary":"List e%d","parameters":[{"name":"$top","in":"query","schema":{"type":"integer","minimum":0}},{"name":"$filter","in":"query","schema":{"type":"string"}},{"name":"$select","in":"query","schema":{"type":"array","items":{"type":"string","enum":["id","name","f0","f1","f2"]}}}],"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","properties":{"value":{"type":"array","items":%s},"@odata.nextLink":{"type":"string","nullable":true}}}}}}}},`, i, e, i, e, e, ref)
		fmt.Fprintf(&b, `"post":{"operationId":"g%d.e%d.Create","requestBody":{"required":true,"content":{"application/json":{"schema":%s}}},"responses":{"201":{"description":"created","content":{"application/json":{"schema":%s}}}}}},`, i, e, ref, ref)
		fmt.Fprintf(&b, `"/g%d/e%d/{id}":{"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"get":{"operationId":"g%d.e%d.Get","responses":{"200":{"description":"ok","content":{"application/json":{"schema":%s}}}}},`, i, e, i, e, ref)
		fmt.Fprintf(&b, `"patch":{"operationId":"g%d.e%d.Update","requestBody":{"required":true,"content":{"application/json":{"schema":%s}}},"responses":{"204":{"description":"ok"}}}}`, i, e, ref)
	}
	b.WriteString(`},"components":{"schemas":{"entity":{"type":"object","properties":{"id":{"type":"string","readOnly":true},"@odata.type":{"type":"string"}}}`)
	for e := range entities {
		fmt.Fprintf(&b, `,"e%d":{"allOf":[{"$ref":"#/components/schemas/entity"},{"title":"e%d","type":"object","properties":{`, e, e)
		for f := range fields {
			if f > 0 {
				b.WriteString(",")
			}
			switch f % 3 {
			case 0:
				fmt.Fprintf(&b, `"f%d":{"anyOf":[{"$ref":"#/components/schemas/e%d"},{"type":"object","nullable":true}],"description":"The e%d this refers to."}`, f, (e*7+f)%entities, (e*7+f)%entities)
			case 1:
				fmt.Fprintf(&b, `"f%d":{"type":"array","items":{"$ref":"#/components/schemas/e%d"},"description":"Related e%d items."}`, f, (e*13+f)%entities, (e*13+f)%entities)
			default:
				fmt.Fprintf(&b, `"f%d":{"type":"string","nullable":true,"description":"Field %d of e%d, a plain value that a user may set."}`, f, f, e)
			}
		}
		b.WriteString(`}}]}`)
	}
	b.WriteString("}}}")
	return b.String()
}
