package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/gateway/catalog"
)

const includeMain = `version: 1
server: { name: t }
auth:
  jwt: { hmac_secret_env: S, algorithms: [HS256], issuer: i, audience: a }
gates:
  write: { scopes: [w] }
include: ["frag/*.yaml"]
`

const includeFragment = `upstreams:
  pets:
    base_url: http://127.0.0.1:9
    workspace: none
tools:
  - name: list_pets
    description: List pets.
    tags: [pets]
    input:
      type: object
      properties:
        limit: { type: integer, minimum: 1, maximum: 100 }
        kind: { type: string, enum: [cat, dog, fish] }
        tenant: { type: string }
      required: [tenant]
      additionalProperties: false
    request:
      upstream: pets
      path: /pets
      query: { limit: "{limit}", kind: "{kind}", t: "{tenant}" }
      headers: { X-Tenant: "{tenant}" }
    output_schema:
      type: object
      properties:
        items: { type: array }
`

func writeCatalog(t *testing.T, main string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(p, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(k string) (string, bool) {
	if k == "S" {
		return "secret", true
	}
	return "", false
}

func TestIncludeAndOverrides(t *testing.T) {
	main := includeMain + `overrides:
  list_pets:
    rename: find_pets
    description: Find pets, hand-written.
    tags: [animals]
    arguments:
      tenant: { hide: true, value: "acme{1}" }
      kind: { schema: { enum: [cat, dog] }, default: cat }
      limit: { schema: { maximum: 20 } }
`
	path := writeCatalog(t, main, map[string]string{"frag/pets.yaml": includeFragment})
	c, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	tool := c.Tool("find_pets")
	if tool == nil || c.Tool("list_pets") != nil {
		t.Fatalf("rename: tools = %v", c.Tools)
	}
	if tool.Description != "Find pets, hand-written." || strings.Join(tool.Tags, ",") != "animals" {
		t.Errorf("description/tags = %q %v", tool.Description, tool.Tags)
	}
	in := string(tool.InputJSON)
	if strings.Contains(in, "tenant") {
		t.Errorf("hidden argument still published: %s", in)
	}
	if !strings.Contains(in, `"enum":["cat","dog"]`) || !strings.Contains(in, `"maximum":20`) {
		t.Errorf("narrowed schema not published: %s", in)
	}
	if tool.Defaults["kind"] != "cat" {
		t.Errorf("default = %v", tool.Defaults)
	}
	if got := tool.Request.Query["t"]; got != "acme{{1}}" {
		t.Errorf("fixed query template = %q, want the literal value with braces escaped", got)
	}
	if len(tool.Request.QueryParams) == 0 || tool.Request.HeaderParams[0].Template.Parts[0].Text != "acme{1}" {
		t.Errorf("fixed header = %+v", tool.Request.HeaderParams)
	}
	if tool.Schema.Validate(map[string]any{"tenant": "x"}) == nil {
		t.Error("a hidden argument is still accepted")
	}
	if tool.Output == nil || tool.Output.Validate(map[string]any{"items": "no"}) == nil {
		t.Error("output_schema not compiled or not enforced by its validator")
	}
	if len(c.Files) != 1 || !strings.HasSuffix(c.Files[0], "pets.yaml") {
		t.Errorf("Files = %v", c.Files)
	}
}

func TestIncludeProblems(t *testing.T) {
	for _, tc := range []struct {
		name, main string
		files      map[string]string
		want       []string
	}{
		{"override-names-missing-tool", includeMain + "overrides:\n  list_pet:\n    description: x\n",
			map[string]string{"frag/a.yaml": includeFragment},
			[]string{`catalog.yaml:10:5: overrides "list_pet": names no tool (did you mean "list_pets"?)`}},
		{"fragment-problem-names-fragment-file", includeMain,
			map[string]string{"frag/a.yaml": strings.Replace(includeFragment, "path: /pets", "path: /pets/{nope}", 1)},
			[]string{`a.yaml:19:13: tool "list_pets": placeholder {nope} names no argument`}},
		{"glob-matches-nothing", strings.Replace(includeMain, "frag/*.yaml", "nothing/*.yaml", 1), nil,
			[]string{`catalog.yaml:7:11: include "nothing/*.yaml" matches no file`}},
		{"widening-refused", includeMain + "overrides:\n  list_pets:\n    arguments:\n      limit: { schema: { maximum: 500 } }\n",
			map[string]string{"frag/a.yaml": includeFragment},
			[]string{`overrides "list_pets": argument "limit": schema maximum 500 would widen 100`}},
		{"hidden-without-value", includeMain + "overrides:\n  list_pets:\n    arguments:\n      limit: { hide: true }\n",
			map[string]string{"frag/a.yaml": includeFragment},
			[]string{`a hidden argument needs a value`}},
		{"upstream-in-two-fragments", includeMain,
			map[string]string{"frag/a.yaml": includeFragment, "frag/b.yaml": "upstreams:\n  pets: { base_url: http://127.0.0.1:1, workspace: none }\n"},
			[]string{`b.yaml:2:9: upstream "pets" is declared by two fragments (first at `, `a.yaml:3:5)`}},
		{"output-schema-not-object", includeMain,
			map[string]string{"frag/a.yaml": strings.Replace(includeFragment, "      type: object\n      properties:\n        items", "      type: array\n      properties:\n        items", 1)},
			[]string{`output_schema must be a JSON Schema with type: object`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeCatalog(t, tc.main, tc.files)
			_, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestIncludeHashCoversFragments(t *testing.T) {
	path := writeCatalog(t, includeMain, map[string]string{"frag/a.yaml": includeFragment})
	c1, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	frag := filepath.Join(filepath.Dir(path), "frag/a.yaml")
	if err := os.WriteFile(frag, []byte(strings.Replace(includeFragment, "List pets.", "List all pets.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c2, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if c1.Hash == c2.Hash {
		t.Error("a changed fragment left the catalog's Hash unchanged")
	}
}

// FuzzOverrides appends fuzzed overrides to a small catalog: loading never
// panics, and a catalog that loads has every tool compiled.
func FuzzOverrides(f *testing.F) {
	base := strings.Replace(includeMain, `include: ["frag/*.yaml"]`, "", 1) + includeFragment
	for _, seed := range []string{
		"  list_pets: { rename: x }\n",
		"  list_pets:\n    arguments:\n      tenant: { hide: true, value: \"a{b}c\" }\n      kind: { schema: { enum: [cat] }, default: cat }\n",
		"  list_pets:\n    arguments:\n      limit: { rename: kind }\n",
		"  list_pets:\n    arguments:\n      limit: { schema: { maximum: 1e400 } }\n",
		"  nope: {}\n",
		"  list_pets: { enabled: false, sensitive: true, requires: [x], annotations: { destructive: true } }\n",
		"  list_pets:\n    arguments:\n      tenant: { hide: true, value: [1, {a: 2}] }\n",
		"  list_pets: { kind: write, gate: write, approval: { approvers: write, ttl: 1m } }\n",
		"  list_pets: { approval: none, output_schema: none }\n",
		"  list_pets: { output_schema: { keep: [items, items.x] } }\n",
		"  list_pets: { output_schema: { type: object, properties: { a: { $ref: \"#/x\" } } } }\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, overrides string) {
		c, err := catalog.Parse("fuzz.yaml", []byte(base+"overrides:\n"+overrides), &catalog.LoadOptions{Getenv: env})
		if err != nil {
			return
		}
		for _, tool := range c.Tools {
			if tool.Schema == nil || tool.InputJSON == nil {
				t.Fatalf("tool %q loaded without a compiled schema", tool.Name)
			}
		}
	})
}

// An argument must never replace a header the upstream sets itself (its
// credentials): the tool's headers are written after the upstream's, so a
// placeholder there would let the agent choose the credential.
func TestToolHeaderCannotReplaceUpstreamHeader(t *testing.T) {
	frag := strings.Replace(includeFragment, "    workspace: none\n", "    workspace: none\n    headers: { X-Api-Key: k-of-the-gateway }\n", 1)
	for _, h := range []string{`X-Api-Key: "{tenant}"`, `x-api-key: "k-{tenant}"`} {
		f := strings.Replace(frag, `headers: { X-Tenant: "{tenant}" }`, `headers: { `+h+` }`, 1)
		path := writeCatalog(t, includeMain, map[string]string{"frag/a.yaml": f})
		_, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
		if err == nil || !strings.Contains(err.Error(), `header x-api-key`) && !strings.Contains(err.Error(), `header X-Api-Key`) {
			t.Errorf("%s: Load = %v, want the header refused as the upstream's own", h, err)
		} else if !strings.Contains(err.Error(), "upstream") {
			t.Errorf("%s: error %v does not say the upstream sets it", h, err)
		}
	}
	// A literal (no argument in it) may still set a header per tool.
	f := strings.Replace(frag, `headers: { X-Tenant: "{tenant}" }`, `headers: { X-Api-Key: other-literal }`, 1)
	if _, err := catalog.Load(writeCatalog(t, includeMain, map[string]string{"frag/a.yaml": f}), &catalog.LoadOptions{Getenv: env}); err != nil {
		t.Errorf("a literal tool header over an upstream header: Load = %v, want it accepted", err)
	}
}

// A hidden argument's fixed value fills a path placeholder as that
// argument would: one segment, escaped, never "/", "." or "..".
func TestHiddenPathArgumentStaysInItsSegment(t *testing.T) {
	frag := strings.Replace(includeFragment, "path: /pets", "path: /pets/{tenant}", 1)
	for _, v := range []string{`"../admin"`, `"a/../b"`, `".."`, `"a%2F..%2Fb"`, `"a\\b"`} {
		main := includeMain + "overrides:\n  list_pets:\n    arguments:\n      tenant: { hide: true, value: " + v + " }\n"
		_, err := catalog.Load(writeCatalog(t, main, map[string]string{"frag/a.yaml": frag}), &catalog.LoadOptions{Getenv: env})
		if err == nil || !strings.Contains(err.Error(), "segment") {
			t.Errorf("hidden path value %s: Load = %v, want it refused as leaving its segment", v, err)
		}
	}
	main := includeMain + "overrides:\n  list_pets:\n    arguments:\n      tenant: { hide: true, value: \"a b?c\" }\n"
	c, err := catalog.Load(writeCatalog(t, main, map[string]string{"frag/a.yaml": frag}), &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tool("list_pets").Request.Path; got != "/pets/a%20b%3Fc" {
		t.Errorf("path = %q, want the value escaped as one segment", got)
	}
}

// A tool renamed onto another's name is a duplicate, and the message
// points at the first one's file and line, not at an internal number.
func TestRenameOntoExistingToolNamesTheFirstFile(t *testing.T) {
	second := strings.Replace(strings.Replace(includeFragment, "name: list_pets", "name: find_pets", 1), "upstreams:\n  pets:", "upstreams:\n  pets2:", 1)
	second = strings.Replace(second, "upstream: pets", "upstream: pets2", 1)
	main := includeMain + "overrides:\n  find_pets:\n    rename: list_pets\n"
	_, err := catalog.Load(writeCatalog(t, main, map[string]string{"frag/a.yaml": includeFragment, "frag/b.yaml": second}), &catalog.LoadOptions{Getenv: env})
	if err == nil {
		t.Fatal("Load accepted two tools named list_pets")
	}
	if !strings.Contains(err.Error(), "duplicate tool name (first at ") || !strings.Contains(err.Error(), "a.yaml:6:") {
		t.Errorf("Load = %v, want the duplicate to name the first tool's place as FILE:LINE:COL (a.yaml:6:…)", err)
	}
}

func TestDuplicateKeyInFragmentNamesItsLine(t *testing.T) {
	frag := strings.Replace(includeFragment, "    description: List pets.\n", "    description: List pets.\n    description: Again.\n", 1)
	_, err := catalog.Load(writeCatalog(t, includeMain, map[string]string{"frag/a.yaml": frag}), &catalog.LoadOptions{Getenv: env})
	if err == nil || !strings.Contains(err.Error(), `a.yaml:8:5:`) || !strings.Contains(err.Error(), `duplicate key "description" (first at line 7)`) {
		t.Errorf("Load = %v, want a.yaml:8:5 … duplicate key \"description\" (first at line 7)", err)
	}
}

// TestOverrideBoundaries: an override may narrow an argument's schema to
// exactly its own bounds, or to a subset of its enum, and never past them;
// a hidden argument's value must fit the schema; a paging argument cannot
// be hidden.
func TestOverrideBoundaries(t *testing.T) {
	frag := map[string]string{"frag/a.yaml": includeFragment}
	paged := map[string]string{"frag/a.yaml": strings.Replace(includeFragment, "    output_schema:", "    paging: { page_size_argument: limit }\n    output_schema:", 1)}
	over := func(args string) string {
		return includeMain + "overrides:\n  list_pets:\n    arguments:\n" + args
	}
	for _, tc := range []struct {
		name, main string
		files      map[string]string
		want       string // "": loads
	}{
		{"maximum-equal", over("      limit: { schema: { maximum: 100 } }\n"), frag, ""},
		{"maximum-narrower", over("      limit: { schema: { maximum: 99 } }\n"), frag, ""},
		{"maximum-wider", over("      limit: { schema: { maximum: 101 } }\n"), frag, `schema maximum 101 would widen 100`},
		{"minimum-equal", over("      limit: { schema: { minimum: 1 } }\n"), frag, ""},
		{"minimum-wider", over("      limit: { schema: { minimum: 0 } }\n"), frag, `schema minimum 0 would widen 1`},
		{"enum-subset", over("      kind: { schema: { enum: [cat, dog] } }\n"), frag, ""},
		{"enum-other-value", over("      kind: { schema: { enum: [cat, bird] } }\n"), frag, `enum value bird is not one of the argument's own values`},
		{"hidden-value-fits", over("      limit: { hide: true, value: 100 }\n"), frag, ""},
		{"hidden-value-outside-schema", over("      limit: { hide: true, value: 500 }\n"), frag, `argument "limit": value does not fit the argument's schema`},
		{"hide-paging-argument", over("      limit: { hide: true, value: 10 }\n"), paged, `argument "limit": a paging argument cannot be hidden`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeCatalog(t, tc.main, tc.files)
			_, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Load = %v, want it to load", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Load = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestIncludeFileBound: include may match up to 256 fragment files; one
// more is refused with the count, before any is read.
func TestIncludeFileBound(t *testing.T) {
	for _, n := range []int{256, 257} {
		files := map[string]string{"frag/a.yaml": includeFragment}
		for i := 1; i < n; i++ {
			files[fmt.Sprintf("frag/e%03d.yaml", i)] = "upstreams: {}\n"
		}
		path := writeCatalog(t, includeMain, files)
		_, err := catalog.Load(path, &catalog.LoadOptions{Getenv: env})
		switch {
		case n == 256 && err != nil:
			t.Errorf("%d fragments: %v, want them loaded", n, err)
		case n == 257 && (err == nil || !strings.Contains(err.Error(), "include matches 257 files, more than 256")):
			t.Errorf("%d fragments: %v, want the bound named", n, err)
		}
	}
}

// TestOverrideWrittenZeroReplaces: a field an override writes replaces the
// tool's even when it is the zero value, and what it does not write stays.
func TestOverrideWrittenZeroReplaces(t *testing.T) {
	frag := strings.Replace(includeFragment, "    tags: [pets]\n",
		"    tags: [pets]\n    sensitive: true\n    annotations: { open_world: true }\n", 1)
	main := strings.Replace(includeMain, "gates:\n", "prerequisites:\n  kb: { claim: kb }\ngates:\n", 1)
	for _, tc := range []struct {
		name, override string
		check          func(*catalog.Tool) string
	}{
		{"sensitive-false-leaves-the-triple-lock", "sensitive: false", func(tool *catalog.Tool) string {
			if tool.Sensitive {
				return "still sensitive"
			}
			return ""
		}},
		{"absent-sensitive-keeps-the-lock", "title: Pets", func(tool *catalog.Tool) string {
			if !tool.Sensitive || tool.Annotations == nil || tool.Annotations.OpenWorld == nil {
				return "an unwritten field changed"
			}
			return ""
		}},
		{"empty-annotations-clear", "annotations: {}", func(tool *catalog.Tool) string {
			if a := tool.Annotations; a != nil && a.OpenWorld != nil {
				return "open_world survived annotations: {}"
			}
			return ""
		}},
		{"empty-requires-clear", "requires: []", func(tool *catalog.Tool) string {
			if len(tool.Requires) != 0 {
				return fmt.Sprintf("requires = %v", tool.Requires)
			}
			return ""
		}},
		{"empty-gate-is-view", "gate: \"\"", func(tool *catalog.Tool) string {
			if tool.Gate != "view" {
				return "gate = " + tool.Gate
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The fragment's tool requires kb, so that requires: [] has
			// something to clear.
			f := strings.Replace(frag, "    tags: [pets]\n", "    tags: [pets]\n    requires: [kb]\n    gate: write\n", 1)
			m := main + "overrides:\n  list_pets: { " + tc.override + " }\n"
			c, err := catalog.Load(writeCatalog(t, m, map[string]string{"frag/a.yaml": f}), &catalog.LoadOptions{Getenv: env})
			if err != nil {
				t.Fatalf("Load = %v", err)
			}
			if msg := tc.check(c.Tool("list_pets")); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// TestOverrideOutputSchema: keep trims what tools/list advertises while
// the upstream's full answer still passes the check; a replacement that
// is wrong is reported at the override, in the catalog, not in the
// fragment it replaced.
func TestOverrideOutputSchema(t *testing.T) {
	frag := strings.Replace(includeFragment, "        items: { type: array }\n",
		"        items: { type: array, items: { type: object, additionalProperties: false, properties: { id: { type: integer }, name: { type: string }, photo: { type: string } } } }\n"+
			"        next: { type: string }\n      additionalProperties: false\n", 1)
	main := includeMain + "overrides:\n  list_pets:\n    output_schema: { keep: [items.id, items.name] }\n"
	c, err := catalog.Load(writeCatalog(t, main, map[string]string{"frag/a.yaml": frag}), &catalog.LoadOptions{Getenv: env})
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	tool := c.Tool("list_pets")
	if js := string(tool.OutputJSON); strings.Contains(js, "photo") || strings.Contains(js, "next") || !strings.Contains(js, `"name"`) {
		t.Errorf("advertised output schema = %s, want items.id and items.name only", js)
	}
	answer := map[string]any{"next": "c2", "items": []any{map[string]any{"id": 1, "name": "Rex", "photo": "rex.png"}}}
	if err := tool.Output.Validate(answer); err != nil {
		t.Errorf("the upstream's full answer fails the trimmed schema: %v", err)
	}
	if err := tool.Output.Validate(map[string]any{"items": []any{map[string]any{"id": "one"}}}); err == nil {
		t.Error("a kept property lost its type")
	}

	main = includeMain + "overrides:\n  list_pets:\n    output_schema:\n      type: object\n      properties: { items: { type: arrray } }\n"
	_, err = catalog.Load(writeCatalog(t, main, map[string]string{"frag/a.yaml": frag}), &catalog.LoadOptions{Getenv: env})
	if err == nil || !strings.Contains(err.Error(), "catalog.yaml:12:") || strings.Contains(err.Error(), "a.yaml") {
		t.Errorf("Load = %v, want the replaced schema's problem at catalog.yaml:12", err)
	}
}

// TestCatalogSettlesFragmentUpstream: the catalog's own entry for an
// upstream that a fragment declares adds the operator's settings (base
// URL, credentials, timeout) to it, so a re-import never touches them.
func TestCatalogSettlesFragmentUpstream(t *testing.T) {
	frag := strings.Replace(includeFragment, "    workspace: none\n",
		"    workspace: none\n    timeout: 3s\n    headers: { Accept: application/json, authorization: Bearer from-the-document }\n", 1)
	main := includeMain + `upstreams:
  pets:
    base_url: ${PETS_URL:-https://pets.internal/api}
    timeout: 30s
    headers: { Authorization: "Bearer ${PETS_TOKEN}" }
`
	getenv := func(k string) (string, bool) {
		if k == "PETS_TOKEN" {
			return "t0k", true
		}
		return env(k)
	}
	c, err := catalog.Load(writeCatalog(t, main, map[string]string{"frag/a.yaml": frag}), &catalog.LoadOptions{Getenv: getenv})
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	u := c.Upstreams["pets"]
	if u.BaseURL != "https://pets.internal/api" || u.Timeout.D() != 30*time.Second {
		t.Errorf("base_url, timeout = %q, %s; want the catalog's", u.BaseURL, u.Timeout)
	}
	want := map[string]string{"Accept": "application/json", "Authorization": "Bearer t0k"}
	if !reflect.DeepEqual(u.Headers, want) {
		t.Errorf("headers = %v, want %v (merged by name, the catalog's winning)", u.Headers, want)
	}
	if u.Workspace == nil || !u.Workspace.None {
		t.Errorf("workspace = %+v, want the fragment's none", u.Workspace)
	}

	// A setting the catalog adds is checked where the catalog wrote it.
	bad := strings.Replace(main, "timeout: 30s", "timeout: 0s", 1)
	_, err = catalog.Load(writeCatalog(t, bad, map[string]string{"frag/a.yaml": frag}), &catalog.LoadOptions{Getenv: getenv})
	if err == nil || !strings.Contains(err.Error(), "catalog.yaml:11:14: upstream \"pets\": timeout must be greater than 0") {
		t.Errorf("Load = %v, want the catalog's timeout refused at catalog.yaml:11:14", err)
	}
}

// TestIncludeSkipsHiddenFiles: a wildcard never reaches a file or
// directory whose name starts with "." (a .env beside the fragments, a
// .git directory), and a pattern that matches only such files is an
// error that says so.
func TestIncludeSkipsHiddenFiles(t *testing.T) {
	files := map[string]string{
		"frag/a.yaml":         includeFragment,
		"frag/.env":           "PETS_TOKEN=hunter2-secret\n",
		"frag/.secret.yaml":   "upstreams: hunter2-secret\n",
		"frag/.git/x.yaml":    "upstreams: hunter2-secret\n",
		"frag/.hidden/b.yaml": "upstreams: hunter2-secret\n",
	}
	for _, tc := range []struct {
		name, glob string
		want       string // "": loads a.yaml alone
	}{
		{"star", "frag/*", ""},
		{"star-yaml", "frag/*.yaml", ""},
		{"star-in-directory", "frag/*/*.yaml", `include "frag/*/*.yaml" matches only hidden files such as x.yaml`},
		{"dot-star", "frag/.*", `include "frag/.*" matches only hidden files such as .env: include never reads a file whose name starts with "."`},
		{"literal-dotfile", "frag/.secret.yaml", `include "frag/.secret.yaml" matches only hidden files such as .secret.yaml`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			main := strings.Replace(includeMain, `include: ["frag/*.yaml"]`, `include: ["frag/*.yaml", "`+tc.glob+`"]`, 1)
			c, err := catalog.Load(writeCatalog(t, main, files), &catalog.LoadOptions{Getenv: env})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Load = %v", err)
			case tc.want == "":
				if len(c.Files) != 1 || filepath.Base(c.Files[0]) != "a.yaml" {
					t.Errorf("Files = %v, want a.yaml alone", c.Files)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("Load = %v, want an error containing %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error quotes a hidden file's content: %v", err)
			}
		})
	}
}

// TestIncludedFileContentIsNeverQuoted: a file a glob matched by mistake
// (an env file, a key, a broken YAML file holding a password) fails the
// load with its position and the rule, never with its text: load errors
// reach logs and /status.
func TestIncludedFileContentIsNeverQuoted(t *testing.T) {
	const secret = "hunter2-secret"
	for name, body := range map[string]string{
		"env-file":         "DB_PASSWORD=" + secret + "\nAPI_TOKEN=tok\n",
		"pem-key":          "-----BEGIN PRIVATE KEY-----\n" + secret + "\n-----END PRIVATE KEY-----\n",
		"unclosed-quote":   "password: \"" + secret + "\nnext: x\n",
		"flow-list":        "key: [" + secret + "\n",
		"json":             `{"k": "` + secret + `" "j": 1}`,
		"unknown-anchor":   "x: &a 1\ny: *" + secret + "\n",
		"scalar-sections":  "upstreams: " + secret + "\ntools: " + secret + "\n",
		"bad-field-values": "upstreams:\n  x: { timeout: " + secret + ", max_concurrent: " + secret + ", follow_redirects: " + secret + ", max_response_bytes: " + secret + ", base_url: \"${" + secret + "\", workspace: " + secret + " }\n",
		"bad-tool-values":  "tools:\n  - { name: x, enabled: " + secret + ", approval: " + secret + ", input: { maximum: 1" + strings.Repeat("9", 400) + " } }\n",
		"expanded-value":   "upstreams:\n  x: { timeout: \"${DB_PASSWORD}\" }\n",
	} {
		t.Run(name, func(t *testing.T) {
			getenv := func(k string) (string, bool) {
				if k == "DB_PASSWORD" {
					return secret, true
				}
				return env(k)
			}
			_, err := catalog.Load(writeCatalog(t, includeMain, map[string]string{"frag/a.yaml": body}), &catalog.LoadOptions{Getenv: getenv})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			// (Forty nines: the temporary directory's random name may
			// hold a few, the file's 400 would show as many.)
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), strings.Repeat("9", 40)) || strings.Contains(err.Error(), "API_TOKEN") {
				t.Errorf("the error quotes the file's content:\n%v", err)
			}
			if !strings.Contains(err.Error(), "a.yaml:") {
				t.Errorf("the error does not name the file and line:\n%v", err)
			}
		})
	}
}

// TestExpandedValueIsNeverQuoted: in the catalog itself, a value that is
// wrong after expansion is shown as written, never as the variable's
// value.
func TestExpandedValueIsNeverQuoted(t *testing.T) {
	main := includeMain + "upstreams:\n  x: { base_url: http://127.0.0.1:1, workspace: none, timeout: \"${DB_PASSWORD}\", max_concurrent: \"${DB_PASSWORD}\" }\ntools:\n  - { name: t, description: d, request: { upstream: x, path: / }, enabled: \"${DB_PASSWORD}\" }\n"
	getenv := func(k string) (string, bool) {
		if k == "DB_PASSWORD" {
			return "hunter2-secret", true
		}
		return env(k)
	}
	_, err := catalog.Load(writeCatalog(t, main, nil), &catalog.LoadOptions{Getenv: getenv})
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Count(err.Error(), `"${DB_PASSWORD}" (expanded; its value is not shown)`) != 3 {
		t.Errorf("Load = %v, want three problems showing ${DB_PASSWORD} as written, never its value", err)
	}
}
