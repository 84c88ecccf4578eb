package openapi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgw/gateway/openapi"
)

// BenchmarkImportLarge times reading and importing GitHub's REST
// description (about 700 operations, 3 MB of JSON) from the npm cache
// scripts/test.sh fills. Reported: ns/op and the allocations of one whole
// import (read, map, self-check, YAML).
func BenchmarkImportLarge(b *testing.B) {
	path := filepath.Join("..", "test", "openapi-cache", "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
	data, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("CI") != "" {
			b.Fatalf("test/openapi-cache is not filled: %v", err)
		}
		b.Skipf("test/openapi-cache is not filled: %v", err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		doc, err := openapi.Read(data)
		if err != nil {
			b.Fatal(err)
		}
		res, err := openapi.Import(doc, openapi.Options{Upstream: "github", IncludeWrites: true})
		if err != nil {
			b.Fatal(err)
		}
		if res.Tools < 650 {
			b.Fatalf("imported %d tools", res.Tools)
		}
	}
}
