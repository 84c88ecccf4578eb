package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

// Debugging aid: never commit. ZZAPI=name ZZQ='q1|q2' ZZT=tool,tool
// ZZMISS=1 logs every miss of the API, fresh or not.
func TestZZDebug(t *testing.T) {
	name := os.Getenv("ZZAPI")
	if name == "" {
		t.Skip()
	}
	for _, api := range relevanceAPIs {
		if api.name != name {
			continue
		}
		_, core := importedCore(t, api.name, api.spec)
		want := strings.Split(os.Getenv("ZZT"), ",")
		show := func(q string, answers []string) {
			ranked, _ := core.SearchCatalog(proxy.SearchQuery{Query: q, Limit: 20})
			var top []string
			for i, l := range ranked[:min(8, len(ranked))] {
				top = append(top, l.Tool.Name)
				_ = i
			}
			t.Logf("%q rank %d (wants %s)\n   top: %s", q, answerRank(ranked, answers), strings.Join(answers, ","), strings.Join(top, ", "))
		}
		if qs := os.Getenv("ZZQ"); qs != "" {
			for _, q := range strings.Split(qs, "|") {
				show(q, want)
			}
		}
		if os.Getenv("ZZMISS") != "" {
			for _, task := range readTasks(t, name) {
				ranked, _ := core.SearchCatalog(proxy.SearchQuery{Query: task.text, Limit: 20})
				r := answerRank(ranked, task.answers)
				if r == 0 || r > 5 {
					show(task.text, task.answers)
				}
			}
		}
	}
}
