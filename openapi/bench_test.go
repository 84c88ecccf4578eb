package openapi_test

import (
	"os"
	"path/filepath"
	"syscall"
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

// BenchmarkImportGraphSized times reading and importing a generated
// document the size and shape of Microsoft Graph's v1.0 description
// (about 20 MB of JSON, 5,824 operations over 2,500 entity schemas that
// refer to each other), which no pinned package carries. Reported beside
// ns/op: the process's peak resident memory (peak-RSS-MiB), generation
// of the document included, and the tools imported.
//
//	go test -run '^$' -bench ImportGraphSized -benchtime 1x ./openapi/
func BenchmarkImportGraphSized(b *testing.B) {
	data := []byte(graphLikeDoc(5824, 2500, 64))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	tools := 0
	for b.Loop() {
		doc, err := openapi.Read(data)
		if err != nil {
			b.Fatal(err)
		}
		res, err := openapi.Import(doc, openapi.Options{Upstream: "graph", IncludeWrites: true})
		if err != nil {
			b.Fatal(err)
		}
		tools = res.Tools
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Linux: kilobytes
	}
	b.ReportMetric(float64(tools), "tools")
}
