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
	".":         {},
	"catalog":   {mods: []string{"gopkg.in/yaml.v3", "github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text"}, testMods: []string{"github.com/tidwall/gjson"}},
	"rendering": {mods: []string{"github.com/tidwall/gjson"}, testMods: []string{"golang.org/x/text"}},
	"authz":     {pkgs: []string{"catalog"}, mods: []string{"github.com/golang-jwt/jwt/v5", "github.com/tidwall/gjson", "gopkg.in/yaml.v3"}},
	"proxy": {pkgs: []string{"catalog", "authz", "rendering", "approval"}, mods: append([]string{"github.com/tidwall/gjson"}, otel...),
		testPkgs: []string{"test/memnet"}, testMods: []string{"go.opentelemetry.io/otel/sdk"}},
	"mcp": {pkgs: []string{"proxy", "authz", "rendering", "approval"}, mods: append([]string{"golang.org/x/time"}, otel...),
		// google/jsonschema-go: the validator the Go SDK uses for
		// outputSchema, so tests read our schemas as the SDK does.
		testPkgs: []string{"catalog", "test/memnet"},
		testMods: append([]string{"github.com/golang-jwt/jwt/v5", "github.com/google/jsonschema-go"}, sdkTest...)},
	"demo": {testMods: []string{"gopkg.in/yaml.v3"}},
	// gateway import openapi / gateway check (issue 13).
	"openapi": {pkgs: []string{"catalog"}, mods: []string{"github.com/getkin/kin-openapi", "gopkg.in/yaml.v3", "github.com/santhosh-tekuri/jsonschema/v6"}},
	// Human approval (issue 14): the store and sealing, and the page that
	// signs approvers in with OpenID Connect.
	"approval": {pkgs: []string{"catalog", "authz"},
		mods:     []string{"github.com/redis/go-redis/v9", "github.com/jackc/pgx/v5", "golang.org/x/crypto"},
		testMods: []string{"github.com/golang-jwt/jwt/v5"}},
	"approvalpage": {pkgs: []string{"catalog", "authz", "approval", "proxy"},
		mods: []string{"github.com/coreos/go-oidc/v3", "golang.org/x/oauth2"}},
	"cmd/gateway": {pkgs: []string{"*"}, mods: append([]string{
		"github.com/fsnotify/fsnotify", "github.com/go-chi/chi/v5", "github.com/golang-jwt/jwt/v5",
		"github.com/prometheus/client_golang", "go.opentelemetry.io/otel/sdk",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
		"github.com/getkin/kin-openapi",
	}, otel...), testMods: sdkTest},
	"examples/prometheus-alertmanager": {testPkgs: []string{"*"}, testMods: append([]string{"gopkg.in/yaml.v3"}, sdkTest...)},
	"test": {testPkgs: []string{"*"}, testMods: append([]string{"github.com/golang-jwt/jwt/v5",
		"github.com/chromedp/chromedp", "github.com/chromedp/cdproto"}, sdkTest...)},
	"test/bench":      {mods: []string{"github.com/golang-jwt/jwt/v5"}},
	"test/gatewaybin": {},
	"test/goclient":   {mods: sdkTest},
	"test/memnet":     {},
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
				case !strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
					// The standard library.
				default:
					m := moduleOf(imp, mods)
					if !slices.Contains(allowedMods, m) {
						t.Errorf("new module: %s %s imports %s (module %s); allowed: %v", rel, what, imp, m, allowedMods)
					}
				}
			}
		}
		check(p.Imports, row.pkgs, row.mods, "code")
		check(append(p.TestImports, p.XTestImports...), append(slices.Clone(row.pkgs), row.testPkgs...), append(slices.Clone(row.mods), row.testMods...), "tests")
	}
	if seen < 8 {
		t.Fatalf("go list saw %d packages; is the test running at the module root?", seen)
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
