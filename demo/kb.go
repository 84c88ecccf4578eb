package demo

import (
	"math"
	"net/http"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	defaultKBResults = 5
	maxKBResults     = 20
	snippetBytes     = 320
)

func kbStatus(c *call) reply {
	return ok(map[string]any{"enabled": c.ws.kbEnabled, "documentCount": len(c.ws.docs)})
}

type kbResult struct {
	DocID   string  `json:"docId"`
	Title   string  `json:"title"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}

// kbSearch ranks documents by term frequency, title terms weighing three
// times body terms. Only workspaces with a knowledge base answer.
func kbSearch(c *call) reply {
	if !c.ws.kbEnabled {
		return problem(http.StatusConflict, "knowledge base disabled", "No knowledge base",
			"workspace "+quote(c.ws.id)+" has no knowledge base", "/kb/search")
	}
	q := c.r.URL.Query()
	terms := words(q.Get("q"))
	if len(terms) == 0 {
		return fail(http.StatusBadRequest, "query required", "q must contain at least one word")
	}
	limit, bad := sizeParam(q.Get("limit"), "limit", defaultKBResults, maxKBResults)
	if bad != nil {
		return *bad
	}
	results := []kbResult{}
	for _, d := range c.ws.docs {
		title, body := strings.ToLower(d.Title), strings.ToLower(d.Body)
		raw, first := 0, -1
		for _, t := range terms {
			raw += 3*strings.Count(title, t) + strings.Count(body, t)
			if i := strings.Index(body, t); i >= 0 && (first < 0 || i < first) {
				first = i
			}
		}
		if raw == 0 {
			continue
		}
		score := math.Round(float64(raw)/float64(raw+5)*1000) / 1000
		results = append(results, kbResult{d.ID, d.Title, snippet(d.Body, first), score})
	}
	sort.SliceStable(results, func(a, b int) bool {
		if results[a].Score != results[b].Score {
			return results[a].Score > results[b].Score
		}
		return results[a].DocID < results[b].DocID
	})
	return ok(map[string]any{"query": q.Get("q"), "results": results[:min(limit, len(results))]})
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// snippet quotes body around byte offset at (the first match; -1 for none):
// the whole body when it is short, else a window on rune boundaries.
// ToLower can change byte lengths outside ASCII, so at is only a hint.
func snippet(body string, at int) string {
	if len(body) <= snippetBytes {
		return body
	}
	lo := max(0, min(at-80, len(body)-snippetBytes))
	for lo > 0 && !utf8.RuneStart(body[lo]) {
		lo--
	}
	hi := min(len(body), lo+snippetBytes)
	for hi < len(body) && !utf8.RuneStart(body[hi]) {
		hi--
	}
	s := body[lo:hi]
	if lo > 0 {
		s = "…" + s
	}
	if hi < len(body) {
		s += "…"
	}
	return s
}
