package proxy_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/proxy"
)

var updateRanking = flag.Bool("update", false, "rewrite testdata/search/ranking.golden from the current ranking")

// The ranking of the bundled catalog for a spread of queries, pinned: a
// change to the scoring (weights, BM25's terms, the synonyms, the
// question and verb rules) shows up as a diff of this file. The relevance
// benchmark (cmd/gateway) says whether such a change is better; this test
// says that it happened. Rewrite with: go test ./proxy -run TestRankingOfTheBundledCatalog -update
func TestRankingOfTheBundledCatalog(t *testing.T) {
	placeholders := func(k string) (string, bool) {
		if strings.HasSuffix(k, "_URL") {
			return "http://127.0.0.1:9", true
		}
		return "x", true
	}
	cat, err := catalog.Load(filepath.Join("..", "catalog.yaml"), &catalog.LoadOptions{Getenv: placeholders})
	if err != nil {
		t.Fatal(err)
	}
	core, err := proxy.New(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"cancel the job that is stuck",
		"why did my job fail",
		"who changed the schedule",
		"which queues are paused",
		"pause a queue",
		"turn the queue back on",
		"retry a failed job",
		"show the output of a job",
		"what is the payload of job 42",
		"list every workflow",
		"stop a running workflow",
		"kick off a schedule now",
		"how many jobs are waiting",
		"limit how many jobs run at once",
		"find the runbook for a billing outage",
		"jobs tagged urgent",
		"what does this job depend on",
		"history of a job",
		"audit trail of operator actions",
		"observers watching the cluster",
		"requeue",
		"get job",
		"workflow jobs",
		"search documents about deploys",
		"ask the scheduler",
		"the schedule changed by who",
		"the JOBStatus",
	}
	var b strings.Builder
	for _, q := range queries {
		found, err := core.SearchCatalog(proxy.SearchQuery{Query: q, Limit: 5})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var names []string
		for _, l := range found {
			names = append(names, l.Tool.Name)
		}
		b.WriteString(q + "\t" + strings.Join(names, " ") + "\n")
	}
	golden := filepath.Join("testdata", "search", "ranking.golden")
	if *updateRanking {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got := b.String(); got != string(want) {
		gotLines, wantLines := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Errorf("ranking changed:\n got  %s\n want %s", gotLines[i], wantLines[i])
			}
		}
		if len(gotLines) != len(wantLines) {
			t.Errorf("%d lines, want %d", len(gotLines), len(wantLines))
		}
	}
}
