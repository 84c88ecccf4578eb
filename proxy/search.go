package proxy

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgw/gateway/catalog"
)

// Tool search ranks a caller's visible tools for a natural-language
// query with BM25F: each field of a tool counts with its own weight (a
// word in the name says more than one deep in the description), and term
// statistics are taken over the caller's visible tools only, so neither
// the order nor anything else in an answer depends on a tool the caller
// cannot see.
//
// The index is built once per installed catalog (New) and shared read-only
// by every query; a reload builds a new Core and so a new index. It is a
// map from stemmed term to postings, small enough to hold 10,000 tools in
// a few MiB.
//
// Written here rather than with a full-text library: the corpus is a few
// thousand short documents held in memory, queried with a visibility
// filter that must also apply to the statistics, which a general engine
// computes over its whole index. The measurement is in the commit.

// Field weights: how much one occurrence of a term in a field counts.
const (
	weightName  = 3.0
	weightTitle = 2.0
	weightTag   = 2.0
	weightDesc  = 1.0
	weightArg   = 1.5 // argument names
	weightArgD  = 0.5 // argument descriptions
	weightRoute = 1.0 // an imported tool's method and path
	// weightSynonym scales a term reached through a synonym of a query word.
	weightSynonym = 0.4
	bm25K1        = 1.2
	bm25B         = 0.75
)

// Bounds on a search.
const (
	// MaxSearchQuery bounds the query, in bytes.
	MaxSearchQuery = 1024
	// MaxSearchLimit bounds how many tools one search returns.
	MaxSearchLimit = 20
	// DefaultSearchLimit is the number returned when limit is absent.
	DefaultSearchLimit = 5
	// maxQueryTerms bounds the distinct terms of a query that are scored.
	maxQueryTerms = 32
)

type posting struct {
	doc int32
	wtf float32 // the field-weighted term frequency
}

// searchIndex holds every tool of a catalog, visible or not; queries
// filter by visibility.
type searchIndex struct {
	postings map[string][]posting
	length   []float32 // each document's weighted length
	// scratch holds score slices, one per concurrent query, all zero
	// between queries: a query over 10,000 tools would otherwise
	// allocate 80 KB.
	scratch sync.Pool
}

func newSearchIndex(tools []*tool) *searchIndex {
	ix := &searchIndex{postings: map[string][]posting{}, length: make([]float32, len(tools))}
	ix.scratch.New = func() any { s := make([]float64, len(tools)); return &s }
	for i, t := range tools {
		tf := map[string]float32{}
		add := func(text string, w float32) {
			for _, term := range terms(text) {
				tf[term] += w
				ix.length[i] += w
			}
		}
		d := t.def
		add(d.Name, weightName)
		add(d.Title, weightTitle)
		add(d.Description, weightDesc)
		for _, g := range d.Tags {
			add(g, weightTag)
		}
		if props, ok := d.Input["properties"].(map[string]any); ok {
			for name, p := range props {
				add(name, weightArg)
				if m, ok := p.(map[string]any); ok {
					if s, ok := m["description"].(string); ok {
						add(s, weightArgD)
					}
				}
			}
		}
		add(d.Request.Method+" "+d.Request.Path, weightRoute)
		for term, w := range tf {
			ix.postings[term] = append(ix.postings[term], posting{doc: int32(i), wtf: w})
		}
	}
	return ix
}

// searchView is what a search needs of one caller's view: which tools
// are visible and their average weighted length.
type searchView struct {
	visible []bool // by tool index
	count   int
	avgLen  float64
}

func (ix *searchIndex) view(tools []*tool) *searchView {
	v := &searchView{visible: make([]bool, len(ix.length))}
	var total float64
	for _, t := range tools {
		v.visible[t.index] = true
		total += float64(ix.length[t.index])
	}
	v.count = len(tools)
	if v.count > 0 {
		v.avgLen = total / float64(v.count)
	}
	return v
}

// hit is one scored tool.
type hit struct {
	doc   int32
	score float64
}

// better orders hits: higher score first, then catalog order.
func (h hit) better(o hit) bool {
	return h.score > o.score || h.score == o.score && h.doc < o.doc
}

// rank scores the visible tools for query and returns the best limit
// that keep passes, best first; ties keep catalog order.
func (ix *searchIndex) rank(v *searchView, query string, limit int, keep func(doc int32) bool) []int32 {
	weights := queryTerms(query)
	scores := ix.scratch.Get().(*[]float64)
	var touched []int32
	defer func() {
		// Only touched entries were written: zero them for the next query.
		for _, d := range touched {
			(*scores)[d] = 0
		}
		ix.scratch.Put(scores)
	}()
	sc := *scores
	n := float64(v.count)
	for term, qw := range weights {
		list := ix.postings[term]
		df := 0
		for _, p := range list {
			if v.visible[p.doc] {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		for _, p := range list {
			if !v.visible[p.doc] {
				continue
			}
			tf := float64(p.wtf)
			norm := 1 - bm25B + bm25B*float64(ix.length[p.doc])/max(v.avgLen, 1)
			if sc[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			sc[p.doc] += qw * idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
		}
	}
	// The best limit, kept sorted by insertion: limit is at most
	// MaxSearchLimit, the candidates may be thousands.
	best := make([]hit, 0, limit)
	for _, d := range touched {
		h := hit{d, sc[d]}
		if len(best) == limit && !h.better(best[len(best)-1]) || !keep(d) {
			continue
		}
		i := len(best)
		if i < limit {
			best = append(best, h)
		} else {
			i--
		}
		for ; i > 0 && h.better(best[i-1]); i-- {
			best[i] = best[i-1]
		}
		best[i] = h
	}
	out := make([]int32, len(best))
	for i, h := range best {
		out[i] = h.doc
	}
	return out
}

// queryTerms turns a query into weighted terms: its own words at 1, and
// their synonyms at weightSynonym (a word's own weight wins).
func queryTerms(query string) map[string]float64 {
	out := map[string]float64{}
	var own []string
	for _, t := range terms(query) {
		if len(own) >= maxQueryTerms {
			break
		}
		if _, dup := out[t]; !dup {
			out[t] = 1
			own = append(own, t)
		}
	}
	for _, t := range own {
		for _, s := range synonyms[t] {
			if _, own := out[s]; !own {
				out[s] = weightSynonym
			}
		}
	}
	return out
}

// terms splits text into lower-case stemmed words: camelCase and
// snake_case names come apart, punctuation and control characters
// separate, stop words are dropped.
func terms(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if stopWords[w] || len(w) > 64 {
			return
		}
		out = append(out, stem(w))
	}
	var prev rune
	for i, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// A lower-to-upper edge starts a word (listJobs), as does
			// the last capital of a run before a lower-case letter
			// (HTTPServer: HTTP, Server).
			if unicode.IsUpper(r) && len(word) > 0 {
				next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && unicode.IsLower(next) {
					flush()
				}
			}
			word = append(word, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// stem strips the common English inflections, so "runs", "running" and
// "run" meet, and "cancelled", "canceled" and "cancel" do. It is
// deliberately light: a wrong merge costs more than a missed one.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		return undouble(w[:n-2])
	}
	return w
}

// undouble turns "cancell" into "cancel" and "stopp" into "stop".
func undouble(w string) string {
	if n := len(w); n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiousl", rune(w[n-1])) || n > 4 && strings.HasSuffix(w, "ll") {
		return w[:n-1]
	}
	return w
}

var stopWords = map[string]bool{}

// synonyms maps a stemmed word to words an API may use for the same
// thing. Groups are symmetric.
var synonyms = map[string][]string{}

func init() {
	for _, w := range strings.Fields("a an and are as at be by for from how i in into is it its me my of on or our please that the their them then this to us was we what when where which who whose why will with you your any") {
		stopWords[w] = true
	}
	for _, group := range [][]string{
		{"delete", "remove", "destroy", "drop", "erase", "purge"},
		{"list", "enumerate", "all", "browse"},
		{"get", "fetch", "read", "retrieve", "show", "view", "describe", "inspect", "detail", "lookup"},
		{"create", "add", "new", "make", "register", "open"},
		{"update", "edit", "modify", "change", "patch", "set", "replace"},
		{"cancel", "abort", "stop", "kill", "terminate", "halt"},
		{"restart", "retry", "rerun", "resume", "replay"},
		{"search", "find", "query", "filter", "match"},
		{"count", "number", "total", "many"},
		{"user", "member", "person", "people", "account"},
		{"org", "organization", "organisation", "tenant"},
		{"repo", "repository", "project"},
		{"log", "history", "audit"},
		{"alert", "alarm", "incident", "notification"},
		{"silence", "mute", "snooze", "suppress"},
		{"secret", "credential", "password", "token", "key"},
		{"error", "failure", "fail", "crash", "problem"},
		{"job", "task", "run", "execution", "workflow"},
		{"schedule", "cron", "timer", "trigger"},
		{"document", "doc", "article", "page", "knowledge"},
		{"owner", "author", "creator"},
		{"metric", "measurement", "series", "statistic"},
		{"config", "configuration", "setting", "option"},
		{"version", "release", "revision"},
		{"permission", "role", "access", "grant"},
		{"comment", "note", "remark", "reply"},
		{"approve", "accept", "confirm"},
		{"reject", "deny", "decline"},
		{"stuck", "hung", "hang", "pending", "waiting", "blocked"},
	} {
		stemmed := make([]string, len(group))
		for i, w := range group {
			stemmed[i] = stem(w)
		}
		for _, w := range stemmed {
			for _, o := range stemmed {
				if o != w && !slices.Contains(synonyms[w], o) {
					synonyms[w] = append(synonyms[w], o)
				}
			}
		}
	}
}

// matchesFilters reports whether t passes a search's tags and kind.
func matchesFilters(t *catalog.Tool, tags []string, kind string) bool {
	if kind != "" && t.Kind != kind {
		return false
	}
	if len(tags) == 0 {
		return true
	}
	for _, g := range t.Tags {
		for _, want := range tags {
			if strings.EqualFold(g, want) {
				return true
			}
		}
	}
	return false
}
