package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpgw/gateway/proxy"
)

func TestZZDebug(t *testing.T) {
	api := os.Getenv("ZZAPI")
	var spec string
	for _, a := range relevanceAPIs {
		if a.name == api {
			spec = a.spec
		}
	}
	cat, core := importedCore(t, api, spec)
	byName := map[string]int{}
	for i, tl := range cat.Tools {
		byName[tl.Name] = i
	}
	for _, q := range strings.Split(os.Getenv("ZZQ"), "|") {
		ranked, _ := core.SearchCatalog(proxy.SearchQuery{Query: q, Limit: 20})
		t.Logf("QUERY %q", q)
		for i, l := range ranked[:min(10, len(ranked))] {
			d := l.Tool
			t.Logf("  %d %s [%s %s] title=%q tags=%v desc=%.150q", i+1, d.Name, d.Request.Method, d.Request.Path, d.Title, d.Tags, d.Description)
		}
	}
	for _, n := range strings.Split(os.Getenv("ZZT"), ",") {
		if i, ok := byName[n]; ok {
			d := cat.Tools[i]
			t.Logf("WANT %s [%s %s] title=%q tags=%v hint=%q desc=%.400q", d.Name, d.Request.Method, d.Request.Path, d.Title, d.Tags, d.SearchHint, d.Description)
		}
	}
}

func TestZZMisses(t *testing.T) {
	api := os.Getenv("ZZAPI")
	var spec string
	for _, a := range relevanceAPIs {
		if a.name == api {
			spec = a.spec
		}
	}
	tasks := readTasks(t, api)
	_, core := importedCore(t, api, spec)
	for _, task := range tasks {
		ranked, _ := core.SearchCatalog(proxy.SearchQuery{Query: task.text, Limit: 20})
		rank := answerRank(ranked, task.answers)
		if rank > 0 && rank <= 5 {
			continue
		}
		var top []string
		for _, l := range ranked[:min(5, len(ranked))] {
			top = append(top, l.Tool.Name)
		}
		t.Logf("miss (rank %d): %q wants %s; top 5: %s", rank, task.text, strings.Join(task.answers, " or "), strings.Join(top, ", "))
	}
}
