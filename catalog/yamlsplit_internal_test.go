package catalog

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sameTree reports where a and b differ as yaml.v3 trees, comments aside
// (the catalog reads none), or "".
func sameTree(a, b *yaml.Node, path string) string {
	switch {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return path + ": one side is missing"
	}
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value || a.Anchor != b.Anchor ||
		a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: %+v\nvs %+v", path, *a, *b)
	}
	if (a.Alias == nil) != (b.Alias == nil) || a.Alias != nil && (a.Alias.Line != b.Alias.Line || a.Alias.Column != b.Alias.Column) {
		return path + ": aliases differ"
	}
	for i := range a.Content {
		if d := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkSplit fails when parseSplit answers a tree a whole parse does not
// make (or makes none at all); it returns whether it split.
func checkSplit(t *testing.T, data []byte, parts int) bool {
	t.Helper()
	got, ok := parseSplit(data, parts)
	if !ok {
		return false
	}
	want := parseOne(bytes.NewReader(data))
	if want == nil {
		t.Fatalf("split parsed what a whole parse refuses:\n%q", data)
	}
	if d := sameTree(got, want, ""); d != "" {
		t.Fatalf("split and whole parses differ at %s\ninput %q", d, data)
	}
	return true
}

var splitSeeds = []string{
	"version: 1\ntools:\n  - name: a\n    description: A.\n  - name: b\n    description: B.\n  - name: c\n",
	"tools:\n- a\n- b\n- c\nupstreams: {x: 1}\n",
	"version: 1\ntools: # the tools\n  # first\n  - name: a\n\n  - name: b # two\n    input:\n      type: object\n  - &c {name: c}\nafter: *c\n",
	"tools:\n  - &a {name: a}\n  - *a\n  - name: b\n",
	"tools:\r\n  - name: a\r\n  - name: b\r\n  - name: c\r\n",
	"tools:\n  - name: \"a\n  - b\"\n  - name: c\n",
	"tools:\n  - [a,\n  - b]\n  - c\n",
	"tools:\n  - |\n    text\n  - x\n  - y\n",
	"tools:\n  - a\n ? b\n  - c\n",
	"---\ntools:\n  - a\n  - b\n...\n",
	"tools:\n  - a\n---\ntools:\n  - b\n  - c\n",
	"tools:\n  - a\n  - b\ntools:\n  - c\n",
	"x: \"one\ntools:\n  - a\n  - b\n  end\"\n",
	"tools:\n  - a\n  - b\r  - c\n",
	"tools:\n    - a\n    - b\n  - c\n",
	"tools:\n  - a\n  -b\n  - c\n",
	"tools:\n  - a: 1\n    b: 2\n  - a: 3\n\n\n# done\nserver: {name: x}\n",
	"tools:\n  - name: a\n    tags: [x, y]\n  - name: b\n    <<: {kind: read}\n",
	"{\ntools:\n  - a\n  - b\n}",   // a block sequence in a flow mapping: no catalog
	"\ntools:\n  - [0: ]\n  -  \n", // an empty value in a flow collection, placed at a later token
}

func TestParseSplitAgreesWithAWholeParse(t *testing.T) {
	for _, s := range splitSeeds {
		for parts := 2; parts <= 4; parts++ {
			checkSplit(t, []byte(s), parts)
		}
	}
	// The plain case splits: a catalog as gateway import writes it.
	if !checkSplit(t, []byte(splitSeeds[0]), 3) {
		t.Error("a plain tools sequence was parsed whole")
	}
	// The bundled catalog, as a large one would be: its tools repeated.
	src, err := os.ReadFile("../catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !checkSplit(t, src, 4) {
		t.Error("the bundled catalog was parsed whole")
	}
}

// Each thing that makes a split unsafe makes the file parse whole.
func TestParseSplitDeclines(t *testing.T) {
	for name, s := range map[string]string{
		"alias-across-pieces": "tools:\n  - &a {name: a}\n  - name: b\n  - *a\n  - name: c\n",
		"flow-sequence":       "tools: [a, b, c]\n",
		"tab":                 "tools:\n  - a\n\t- b\n",
		"lone-cr":             "tools:\n  - a\r  - b\n  - c\n",
		"second-tools":        "tools:\n  - a\n  - b\ntools:\n  - c\n",
		"document-marker":     "tools:\n  - a\n  - b\n---\nx: 1\n",
		"one-item":            "tools:\n  - a\n",
		"uneven-indent":       "tools:\n    - a\n    - b\n  - c\n",
	} {
		if _, ok := parseSplit([]byte(s), 4); ok {
			t.Errorf("%s: split", name)
		}
	}
}

// A %TAG directive holds for the whole document, so a piece parsed
// without it would read its items' tags otherwise ("!foo" without the
// prefix, "!!int" as YAML's own int where the file made it another tag),
// and a catalog past splitMinBytes would load otherwise than a small one.
func TestParseSplitHonoursTagDirectives(t *testing.T) {
	for _, s := range []string{
		"%TAG ! tag:example.com,2000:app/\n---\ntools:\n  - !foo a\n  - !foo b\n  - !foo c\n",
		"%TAG !! tag:example.com,2000:\n---\ntools:\n  - !!str a\n  - !!int 1\n  - c\n",
		"%TAG !e! tag:example.com,2000:\n---\ntools:\n  - !e!x a\n  - !e!x b\n  - c\n",
		"%YAML 1.2\n%TAG ! tag:example.com,2000:\n--- # doc\ntools:\n  - !a x\n  - !b y\n",
	} {
		for parts := 2; parts <= 4; parts++ {
			checkSplit(t, []byte(s), parts)
		}
	}
}

// A split parse gives the loader the tree, and so the catalog, a whole
// parse does: the same tools, and problems at the same lines.
func TestLargeCatalogLoadsTheSameSplit(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("version: 1\nserver: { name: big }\nauth:\n  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }\nupstreams:\n  up: { base_url: \"http://127.0.0.1:9\" }\ntools:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "  - name: tool_%d\n    description: Reads thing %d.\n    input:\n      type: object\n      properties:\n        id: { type: string }\n      required: [id]\n    request: { upstream: up, path: \"/things/%d/{id}\" }\n", i, i, i)
	}
	good := b.Bytes()
	if len(good) < splitMinBytes {
		t.Fatalf("%d bytes is under splitMinBytes", len(good))
	}
	if !checkSplit(t, good, 4) {
		t.Fatal("the large catalog was parsed whole")
	}
	opts := &LoadOptions{Getenv: func(string) (string, bool) { return "Zq3vX9pL2mN8rT5wY1bC7dF4gH6jK0sA", true }}
	cat, err := Parse("big.yaml", good, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) != 3000 || cat.Tools[2999].Name != "tool_2999" {
		t.Fatalf("%d tools, last %q", len(cat.Tools), cat.Tools[len(cat.Tools)-1].Name)
	}
	// A mistake deep in the last piece is reported at its own line.
	bad := strings.Replace(string(good), "    description: Reads thing 2998.\n", "    descripton: Reads thing 2998.\n", 1)
	line := strings.Count(bad[:strings.Index(bad, "descripton")], "\n") + 1
	_, err = Parse("big.yaml", []byte(bad), opts)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("big.yaml:%d:", line)) {
		t.Fatalf("err = %v, want a problem at line %d", err, line)
	}
}

func FuzzParseSplit(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, parts uint8) {
		if len(data) > 4096 {
			return
		}
		checkSplit(t, data, 2+int(parts%6))
	})
}

// FuzzParseSplitItems builds files the splitter does split: a header, a
// tools sequence of the fuzzer's items (whatever their lines hold), and a
// trailer, so that the pieces' edges meet odd content often.
func FuzzParseSplitItems(f *testing.F) {
	f.Add([]byte("version: 1\x00name: a\x00name: b\n    description: \"x\n  - y\"\x00&a {n: 1}\x00*a\x00server: {}"), uint8(1))
	f.Add([]byte("\x00? k\x00|\n    text\x00name:\x00 # c\n\n\x00after:"), uint8(3))
	f.Add([]byte("\x00[a,\x00b]\x00{x: 1,\n  y: 2}\x00- z\x00"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, parts uint8) {
		if len(data) > 4096 {
			return
		}
		fields := bytes.Split(data, []byte{0})
		if len(fields) < 3 {
			return
		}
		var b bytes.Buffer
		b.Write(fields[0])
		b.WriteString("\ntools:\n")
		for _, it := range fields[1 : len(fields)-1] {
			b.WriteString("  - ")
			b.Write(it)
			b.WriteString("\n")
		}
		b.Write(fields[len(fields)-1])
		checkSplit(t, b.Bytes(), 2+int(parts%6))
	})
}
