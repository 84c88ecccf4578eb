package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The import graph STYLE.md describes ("Layout"), pinned: which of the
// module's packages each package may import, and which third-party
// modules, in its code and in its tests. A new arrow fails this test
// until the table says it is meant (tailscale tstest/deptest does the
// same over `go list`). A package the table does not know fails too.

const module = "github.com/mcpgw/gateway"

type allowed struct {
	why      string   // what the package is for, and so why these arrows
	pkgs     []string // module packages, relative ("catalog"); "*": any
	mods     []string // third-party modules
	testPkgs []string // more module packages for _test files
	testMods []string // more modules for _test files
}

var (
	otel    = []string{"go.opentelemetry.io/otel", "go.opentelemetry.io/otel/trace"}
	sdkTest = []string{"github.com/modelcontextprotocol/go-sdk"}
)

var layout = map[string]allowed{
	".": {why: "the embedded demo catalog and this test; imports nothing of ours"},
	"catalog": {why: "loads and validates catalog.yaml: YAML, JSON Schema for arguments, x/text for Unicode-aware names",
		pkgs: []string{"internal/text"},
		mods: []string{"gopkg.in/yaml.v3", "github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text"}, testMods: []string{"github.com/tidwall/gjson"}},
	"rendering": {why: "bounds and fences upstream answers; reads JSON with gjson and nothing else of ours",
		mods: []string{"github.com/tidwall/gjson"}, testMods: []string{"golang.org/x/text"}},
	"authz": {why: "turns a bearer token into a principal; knows the catalog's auth section, nothing of the wire",
		pkgs: []string{"catalog", "internal/strictjson"}, mods: []string{"github.com/golang-jwt/jwt/v5", "github.com/tidwall/gjson", "gopkg.in/yaml.v3"}},
	"fleet": {why: "counters replicas share: rates, quotas and leases, in Redis, or in this process without it",
		mods: []string{"github.com/redis/go-redis/v9"}, testPkgs: []string{"test/redistest"}},
	"proxy": {why: "the call pipeline: gates, arguments, upstream request, rendering, approval, audit; no wire format",
		// x/oauth2: the client-credentials grant and the token exchange for
		// upstreams behind an authorization server (upstreams.NAME.auth).
		pkgs: []string{"catalog", "authz", "rendering", "approval", "internal/strictjson", "internal/text", "fleet"}, mods: append([]string{"github.com/tidwall/gjson", "golang.org/x/oauth2"}, otel...),
		testPkgs: []string{"test/memnet", "test/oauthas", "test/redistest"}, testMods: []string{"go.opentelemetry.io/otel/sdk"}},
	"mcp": {why: "the wire: JSON-RPC over Streamable HTTP and stdio, and the REST mirror, on top of proxy",
		pkgs: []string{"proxy", "authz", "rendering", "approval", "internal/strictjson", "internal/text", "fleet"}, mods: append([]string{"golang.org/x/time"}, otel...),
		// google/jsonschema-go: the validator the Go SDK uses for
		// outputSchema, so tests read our schemas as the SDK does.
		testPkgs: []string{"catalog", "test/memnet"},
		testMods: append([]string{"github.com/golang-jwt/jwt/v5", "github.com/google/jsonschema-go"}, sdkTest...)},
	"demo": {why: "the sample upstream the demo runs; standalone so it can be run as its own process",
		testMods: []string{"gopkg.in/yaml.v3"}},
	"openapi": {why: "gateway import openapi and gateway check: reads OpenAPI documents, writes catalog fragments; go.yaml.in/yaml/v4 is kin-openapi's YAML decoder, imported only for the type of its load errors, each of whose spots the import mends",
		pkgs: []string{"catalog", "internal/text"}, mods: []string{"github.com/getkin/kin-openapi", "gopkg.in/yaml.v3", "github.com/santhosh-tekuri/jsonschema/v6", "go.yaml.in/yaml/v4"}},
	"approval": {why: "the approval store (file, Redis, PostgreSQL) and the sealing of approval states",
		mods: []string{"github.com/redis/go-redis/v9", "golang.org/x/crypto"}, testPkgs: []string{"test/redistest"}},
	"approvalpage": {why: "the approvers' web page, which signs people in with OpenID Connect",
		pkgs: []string{"catalog", "authz", "approval", "proxy", "internal/text"},
		mods: []string{"github.com/coreos/go-oidc/v3", "golang.org/x/oauth2"}},
	"oauthserver": {why: "the gateway as an authorization server for MCP clients, federated to an OpenID provider: zitadel/oidc's op runs the protocol",
		pkgs: []string{"catalog", "authz", "fleet"}, testPkgs: []string{"test/redistest"},
		mods: []string{"github.com/zitadel/oidc/v3", "github.com/rs/cors", "github.com/go-jose/go-jose/v4", "github.com/coreos/go-oidc/v3",
			"golang.org/x/oauth2", "github.com/redis/go-redis/v9"}},
	"cmd/gateway": {why: "the binary: wiring, flags, metrics, tracing export, catalog reload; may import anything of ours",
		pkgs: []string{"*"}, mods: append([]string{
			"github.com/fsnotify/fsnotify", "github.com/go-chi/chi/v5", "github.com/golang-jwt/jwt/v5",
			"github.com/prometheus/client_golang", "go.opentelemetry.io/otel/sdk",
			"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
		}, otel...), testMods: sdkTest},
	"examples/prometheus-alertmanager": {why: "an example run end to end against real Prometheus and Alertmanager",
		testPkgs: []string{"*"}, testMods: append([]string{"gopkg.in/yaml.v3"}, sdkTest...)},
	"test": {why: "end-to-end tests against the built binary with real clients and a real browser",
		testPkgs: []string{"*"}, testMods: append([]string{"github.com/golang-jwt/jwt/v5",
			"github.com/chromedp/chromedp", "github.com/chromedp/cdproto"}, sdkTest...)},
	"test/bench": {why: "the load harness; signs its own tokens, and runs the anchor a team would otherwise write: an MCP server on the official Go SDK verifying the same tokens with golang-jwt",
		mods: append([]string{"github.com/golang-jwt/jwt/v5"}, sdkTest...)},
	"test/gatewaybin":     {why: "builds the gateway binary once for the end-to-end tests"},
	"test/goclient":       {why: "a Go SDK client the docs' programs and tests run", mods: sdkTest},
	"test/confirmclient":  {why: "the docs' Go SDK client that answers a confirmation", mods: sdkTest},
	"internal/text":       {why: "the one rule for cutting a string the gateway echoes; standard library only"},
	"internal/strictjson": {why: "the one strict reader of JSON objects at the anti-smuggling boundary; standard library only"},
	"test/oauthas": {why: "a real authorization server for tests: zitadel/oidc's OpenID provider, and go-oidc to verify its tokens as an upstream would",
		mods: []string{"github.com/zitadel/oidc/v3", "github.com/go-jose/go-jose/v4", "github.com/golang-jwt/jwt/v5", "github.com/coreos/go-oidc/v3"}},
	"test/redistest": {why: "a real redis-server for tests, on a unix socket; standard library only"},
	"test/memnet":    {why: "an in-memory network for tests; standard library only"},
}

// Only cmd/gateway (and tests) may import openapi; only proxy, mcp,
// cmd/gateway, the approval page and the end-to-end tests may import
// approval. The rows above say so; this keeps a
// "*" row from hiding it.
var importedOnlyBy = map[string][]string{
	"openapi":  {"cmd/gateway"},
	"approval": {"proxy", "mcp", "cmd/gateway", "approvalpage", "test"},
	// The page imports proxy: only the wiring builds it, so nothing the
	// core serves points back at it.
	"approvalpage": {"cmd/gateway"},
	"oauthserver":  {"cmd/gateway", "test"},
}

type listed struct {
	ImportPath                string
	Imports                   []string
	TestImports, XTestImports []string
}

func TestImportGraph(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list packages: %v", err)
	}
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v", err)
	}
	mods := requiredModules(t)
	for _, r := range layout {
		mods = append(mods, r.mods...)
		mods = append(mods, r.testMods...)
	}
	// used records every arrow some import took, so an allowance that
	// nothing takes any more is reported too: a stale row would let a
	// new import in silently.
	used := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		rel := relative(p.ImportPath)
		row, ok := layout[rel]
		if !ok {
			t.Errorf("package %s is not in the import table (deps_test.go): add its row, with the arrows STYLE.md allows", rel)
			continue
		}
		check := func(imports []string, pkgs, allowedMods []string, what string) {
			kind := what
			for _, imp := range imports {
				switch {
				case strings.HasPrefix(imp, module+"/") || imp == module:
					to := relative(imp)
					if to == rel {
						continue // an external test package importing its own
					}
					if by, ok := importedOnlyBy[to]; ok && !slices.Contains(by, rel) {
						t.Errorf("%s %s imports %s, which only %v may import", rel, what, to, by)
						continue
					}
					if !slices.Contains(pkgs, "*") && !slices.Contains(pkgs, to) {
						t.Errorf("new arrow: %s %s imports %s; allowed: %v", rel, what, to, pkgs)
					}
					used[rel+" "+kind+" "+to] = true
				case !strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
					// The standard library.
				default:
					m := moduleOf(imp, mods)
					if !slices.Contains(allowedMods, m) {
						t.Errorf("new module: %s %s imports %s (module %s); allowed: %v", rel, what, imp, m, allowedMods)
					}
					used[rel+" "+kind+" "+m] = true
				}
			}
		}
		check(p.Imports, row.pkgs, row.mods, "code")
		check(append(p.TestImports, p.XTestImports...), append(slices.Clone(row.pkgs), row.testPkgs...), append(slices.Clone(row.mods), row.testMods...), "tests")
	}
	if seen < 8 {
		t.Fatalf("go list saw %d packages; is the test running at the module root?", seen)
	}
	for rel, row := range layout {
		stale := func(entries []string, kinds ...string) {
			for _, e := range entries {
				if e == "*" {
					continue
				}
				took := false
				for _, k := range kinds {
					took = took || used[rel+" "+k+" "+e]
				}
				if !took {
					t.Errorf("stale allowance: %s may import %s (%s) but nothing does; remove it from the table", rel, e, kinds[len(kinds)-1])
				}
			}
		}
		stale(row.pkgs, "code")
		stale(row.mods, "code")
		stale(row.testPkgs, "tests")
		stale(row.testMods, "tests")
		if row.why == "" {
			t.Errorf("%s has no reason in the import table", rel)
		}
	}
}

func relative(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// moduleOf is the longest module path that is a prefix of imp at a
// path boundary, or imp itself when none is.
func moduleOf(imp string, mods []string) string {
	best := ""
	for _, m := range mods {
		if (imp == m || strings.HasPrefix(imp, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return imp
	}
	return best
}

// requiredModules reads the module paths go.mod requires.
func requiredModules(t *testing.T) []string {
	f, err := os.Open("go.mod")
	if err != nil {
		t.Fatalf("reading go.mod: %v", err)
	}
	defer f.Close()
	var mods []string
	block := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			block = true
		case block && line == ")":
			block = false
		case block && line != "" && !strings.HasPrefix(line, "//"):
			mods = append(mods, strings.Fields(line)[0])
		case strings.HasPrefix(line, "require "):
			mods = append(mods, strings.Fields(line)[1])
		}
	}
	sort.Strings(mods)
	return mods
}
