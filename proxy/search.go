package proxy

import (
	"maps"
	"math"
	"net/http"
	"regexp"
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
// computes over its whole index. Measured on this 2-core machine with
// 10,000 synthetic tool documents (six fields each), bleve/v2 v2.6.3's
// in-memory index took 117 s to build, held 124 MiB more heap and
// answered in 34 ms at the median (506 ms p99), under the same kind of
// load in which this index answers in about 0.1 ms (p99 under 0.3 ms,
// BenchmarkCatalogScale) and builds with the catalog; bleve also brings
// 35 modules into the gateway's build.

// Field weights: how much one occurrence of a term in a field counts.
// These and the weights below were chosen by a small grid over the
// relevance benchmark's tasks (cmd/gateway/testdata/relevance), tuned on
// half of them and checked on the other half; the optimum is flat around
// them.
const (
	weightName  = 3.0
	weightTitle = 2.0
	weightTag   = 2.0
	weightDesc  = 1.0
	weightArg   = 1.5 // argument names
	weightArgD  = 0.5 // argument descriptions
	weightRoute = 1.0 // an imported tool's method and path
	weightHint  = 0.5 // search_hint: words the agent does not read
	// weightResult scales a query word that names a field of the tool's
	// result (outputSchema), a field of its own scored as the best of
	// a word's evidence, not added to it: "the ticker and homepage of this
	// pool" is the tool whose answer holds ticker and homepage, though
	// neither word is in its name or description.
	weightResult = 0.5
	// resultDepth is how deep under the result's root field names are
	// read: {items: [{pool: {ticker}}]} reaches ticker.
	resultDepth = 2
	// weightSynonym scales a term reached through a synonym of a query word.
	weightSynonym = 0.6
	// weightNamed is the weight of a word found only in a name joined by
	// hyphens or quoted (namedWords), and of "new", whose create group
	// says what it asks.
	weightNamed = 0.5
	// weightPurpose scales the words of what a change is for: "share
	// it with anna so she can edit it" asks to share, not to edit.
	weightPurpose = 0.3
	// weightDerived scales a word of the same root as a query word
	// (review: reviewer).
	weightDerived = 0.7
	// weightNameCover is what a name the query covers wholly adds, as a
	// share of the score, among the best rerankDepth tools.
	weightNameCover = 3.0
	rerankDepth     = 50
	// weightIntent is what a tool of the kind the query's verb asks for
	// (read or write) adds, as a share of the score.
	weightIntent = 1.0
	// weightOne is what a tool whose path takes a key ({id}) adds, as a
	// share of the score, when the query points at one thing (aboutOne).
	weightOne = 0.4
	// weightMany is what a tool whose path ends in a collection the
	// query names in the plural ("what projects do I have": GET
	// /projects) adds, as a share of the score, when the query points at
	// no one thing.
	weightMany = 0.3
	// weightCreate is what a POST to a collection (POST /customers)
	// adds, as a share of the score, when the query asks to create:
	// a POST to a key (/customers/{id}) changes what exists.
	weightCreate = 0.3
	// weightGeneric scales the words for a generic record, asked for
	// when a query word matches no visible tool (related).
	weightGeneric = 0.6
	bm25K1        = 1.2
	bm25B         = 0.75
)

// Bounds on a search.
const (
	// MaxSearchQuery bounds the query, in characters, as the schema of
	// search_tools says (maxLength).
	MaxSearchQuery = 1024
	// MaxSearchLimit bounds how many tools one search returns.
	MaxSearchLimit = 20
	// DefaultSearchLimit is the number returned when limit is absent.
	DefaultSearchLimit = 5
	// maxQueryTerms bounds the distinct terms of a query that are scored,
	// and apart from them the pairs of its words run together.
	maxQueryTerms = 32
	// maxPhraseGap is how many words may part a phrasal verb's two words.
	maxPhraseGap = 3
)

type posting struct {
	doc int32
	wtf float32 // the field-weighted term frequency
	// asked is wtf less what a write tool's arguments give, which is
	// what a read query scores: "is the calendar hidden?" asks of the
	// calendar, not of the update that takes a hidden flag.
	asked float32
}

// searchIndex holds every tool of a catalog, visible or not; queries
// filter by visibility.
type searchIndex struct {
	postings  map[string][]posting
	results   map[string][]posting // the terms of each result's field names (resultFields)
	length    []float32            // each document's weighted length
	names     [][]string           // each document's distinct name terms
	byName    map[string][]int32   // the documents whose name terms, sorted and joined by spaces, are the key
	nameTerms map[string]bool      // every term of a document's name
	read      []bool               // whether each document is a read tool
	scoped    []bool               // whether each document's path takes a key ({id})
	lists     []string             // the term of the collection each document's path ends in (/projects: project), or ""
	records   []bool               // whether each document's path has a segment of its own for a generic record (/items)
	self      []uint8              // whether each document tells the caller who they are (selfTool): 0, 1 or 2
	selfDocs  []int32              // the documents whose self is above 0, in catalog order
	creates   []bool               // whether each document is a POST to a collection (createsInto)
	scores    sync.Pool            // of *scratch
}

func newSearchIndex(tools []*tool) *searchIndex {
	ix := &searchIndex{postings: map[string][]posting{}, results: map[string][]posting{}, byName: map[string][]int32{}, nameTerms: map[string]bool{}, length: make([]float32, len(tools)), names: make([][]string, len(tools)), read: make([]bool, len(tools)), scoped: make([]bool, len(tools)), lists: make([]string, len(tools)), records: make([]bool, len(tools)), self: make([]uint8, len(tools)), creates: make([]bool, len(tools))}
	for i, t := range tools {
		ix.read[i] = t.def.Kind == catalog.KindRead
		ix.scoped[i] = strings.Contains(t.def.Request.Path, "{")
		ix.records[i] = holdsRecords(t.def.Request.Path)
		ix.lists[i] = collectionTerm(t.def.Request.Path)
		if ix.self[i] = selfTool(t.def); ix.self[i] > 0 {
			ix.selfDocs = append(ix.selfDocs, int32(i))
		}
		ix.creates[i] = createsInto(t.def)
		for _, term := range terms(t.def.Name) {
			if !slices.Contains(ix.names[i], term) {
				ix.names[i] = append(ix.names[i], term)
			}
			ix.nameTerms[term] = true
		}
		if len(ix.names[i]) > 0 {
			key := strings.Join(slices.Sorted(slices.Values(ix.names[i])), " ")
			ix.byName[key] = append(ix.byName[key], int32(i))
		}
		tf := map[string]float32{}
		var sets map[string]float32 // a write's arguments' share of tf
		inArgs := false
		add := func(text string, w float32) {
			ws := words(text)
			for _, term := range termsOf(ws) {
				tf[term] += w
				if inArgs {
					sets[term] += w
				}
				ix.length[i] += w
			}
			// A phrasal verb in the tool's own words ("sign in sign
			// out activities") also counts as what it stands for, as
			// in a query; it restates words already counted, so it
			// adds nothing to the tool's length.
			for k := 0; k+1 < len(ws); k++ {
				if verbIntents[stem(ws[k])] == intentNone {
					continue // "how many", "at once": no verb
				}
				for _, term := range phrases[ws[k]+" "+ws[k+1]] {
					tf[term] += w
					if inArgs {
						sets[term] += w
					}
				}
			}
		}
		d := t.def
		add(d.Name, weightName)
		add(d.Title, weightTitle)
		add(d.Description, weightDesc)
		for _, g := range d.Tags {
			add(g, weightTag)
		}
		add(d.SearchHint, weightHint)
		// A POST named as a read (search_catalog_items) takes filters,
		// not values to set.
		if inArgs = d.Kind != catalog.KindRead && !readsByName(d.Name); inArgs {
			sets = map[string]float32{}
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
		inArgs = false
		add(d.Request.Method+" "+d.Request.Path, weightRoute)
		for term, w := range tf {
			ix.postings[term] = append(ix.postings[term], posting{doc: int32(i), wtf: w, asked: max(w-sets[term], 0)})
		}
		// The result's field names: each counted once, and not in the
		// tool's length.
		fields := map[string]bool{}
		resultFields(d.OutputSchema, 0, func(name string) {
			for _, term := range terms(name) {
				fields[term] = true
			}
		})
		for term := range fields {
			ix.results[term] = append(ix.results[term], posting{doc: int32(i), wtf: 1, asked: 1})
		}
	}
	return ix
}

// readsByName reports whether a tool's name starts with a reading verb:
// search_catalog_items, query_metrics.
func readsByName(name string) bool {
	ws := words(name)
	return len(ws) > 0 && verbIntents[stem(ws[0])] == intentRead
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

// rank scores the visible tools for a query's terms (queryTerms) and
// the kind of tool it asks for (queryIntent), both read once by
// SearchQuery.check, and returns the best limit that keep passes, best
// first; ties keep catalog order.
func (ix *searchIndex) rank(v *searchView, q *SearchQuery, keep func(doc int32) bool) []int32 {
	want, one, terms, limit := q.want, q.one, q.terms, q.Limit
	named := ix.namedExactly(v, terms, want, keep)
	// "Which account is this token for?" is answered by the tools that
	// tell the caller who they are, whatever else its words reach.
	exact := len(named) // named[:exact] are named in the query's words
	if q.whoami && want != intentWrite {
		for _, d := range ix.selfDocs {
			if v.visible[d] && keep(d) && !slices.Contains(named[:exact], d) {
				named = append(named, d)
			}
		}
	}
	// related adds to what it is given the terms this view's tools use;
	// they are this view's, so a copy: the checked query stays as it was,
	// to be ranked again over another caller's tools.
	weights := ix.related(v, maps.Clone(terms), q.joined)
	sc := ix.scratch()
	defer ix.scores.Put(sc)
	scores, touched := sc.score, sc.touched[:0]
	best, inGroup := sc.best, sc.inGroup[:0]
	n := float64(v.count)
	avgLen := max(v.avgLen, 1)
	// Terms in a fixed order, so that equal queries sum alike, and by
	// group: a tool gets the best of the terms one query word reached
	// (its own form, its synonyms), not their sum, so a word with many
	// synonyms does not outweigh the others.
	order := slices.SortedFunc(maps.Keys(weights), func(a, b string) int {
		if ga, gb := weights[a].group, weights[b].group; ga != gb {
			return int(ga - gb)
		}
		return strings.Compare(a, b)
	})
	flush := func() {
		for _, d := range inGroup {
			if scores[d] == 0 {
				touched = append(touched, d)
			}
			scores[d] += best[d]
			best[d] = 0
		}
		inGroup = inGroup[:0]
	}
	// score keeps, for each visible tool in list, the better of what it
	// had of this query word and what this field gives.
	score := func(list []posting, qw float64, only bool) {
		df := 0
		for _, p := range list {
			if v.visible[p.doc] {
				df++
			}
		}
		if df == 0 {
			return
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		for _, p := range list {
			if !v.visible[p.doc] || only && (scores[p.doc] == 0 || !ix.records[p.doc]) {
				continue
			}
			tf := float64(p.wtf)
			if want == intentRead {
				if tf = float64(p.asked); tf <= 0 {
					continue
				}
			}
			norm := 1 - bm25B + bm25B*float64(ix.length[p.doc])/avgLen
			c := qw * idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
			if best[p.doc] == 0 {
				inGroup = append(inGroup, p.doc)
			}
			best[p.doc] = max(best[p.doc], c)
		}
	}
	for i, term := range order {
		if i > 0 && weights[order[i-1]].group != weights[term].group {
			flush()
		}
		q := weights[term]
		score(ix.postings[term], q.w, q.onlyReached)
		if !q.onlyReached {
			// The word met in the result's fields: the better of the two.
			score(ix.results[term], weightResult*q.w, false)
		}
	}
	flush()
	sc.inGroup = inGroup
	// The best depth that keep passes, kept in order as they come.
	depth := max(4*limit, rerankDepth)
	top := make([]hit, 0, depth+1)
	for _, d := range touched {
		h := hit{d, scores[d]}
		if len(top) == depth && !better(h, top[depth-1]) || !keep(d) {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, h, func(a, b hit) int {
			if better(a, b) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, i, h)
		if len(top) > depth {
			top = top[:depth]
		}
	}
	for _, d := range touched {
		scores[d] = 0
	}
	sc.touched = touched
	var many map[int32]bool
	if !one {
		many = manyGroups(weights)
	}
	// The best are ordered again by how much of each tool's name the
	// query covers: among tools that match alike, the one whose name says
	// what was asked and little else is the one meant (disable_workflow
	// over list_jobs_for_workflow_run).
	// A question ("who can push", "which roles exist") or a reading
	// verb asks for a read tool, a changing verb ("rotate", "reply")
	// for a write tool.
	for i := range top {
		top[i].score *= 1 + weightNameCover*ix.cover(top[i].doc, weights)
		if want != intentNone && ix.read[top[i].doc] == (want == intentRead) {
			top[i].score *= 1 + weightIntent
		}
		if one && ix.scoped[top[i].doc] {
			top[i].score *= 1 + weightOne
		}
		if q.creates && ix.creates[top[i].doc] {
			top[i].score *= 1 + weightCreate
		}
		// A plural asks for the collection, of the kind asked for: "what
		// boards do I have" lists them, and creates none.
		if q, ok := weights[ix.lists[top[i].doc]]; ok && many[q.group] && (want == intentNone || ix.read[top[i].doc] == (want == intentRead)) {
			top[i].score *= 1 + weightMany
		}
	}
	slices.SortFunc(top, func(a, b hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	// Tools named alike (create_issue, create_issues) keep the order
	// their scores give; one the best depth missed goes after them.
	at := func(d int32) int {
		if i := slices.IndexFunc(top, func(h hit) bool { return h.doc == d }); i >= 0 {
			return i
		}
		return len(top)
	}
	// After the tools the query names, a tool that says who the caller
	// is outright (/users/me) goes before one that may (/user).
	slices.SortStableFunc(named[:exact], func(a, b int32) int { return at(a) - at(b) })
	slices.SortStableFunc(named[exact:], func(a, b int32) int {
		if ix.self[a] != ix.self[b] {
			return int(ix.self[b]) - int(ix.self[a])
		}
		return at(a) - at(b)
	})
	out := make([]int32, 0, min(limit, len(top)))
	out = append(out, named[:min(limit, len(named))]...)
	for _, h := range top {
		if len(out) == limit {
			break
		}
		if !slices.Contains(named, h.doc) {
			out = append(out, h.doc)
		}
	}
	return out
}

// namedExactly are the visible tools that keep passes whose names are
// the query's own words and no others ("create issue", "list users":
// create_issue, list_users), in catalog order, and of the kind the query
// asks for, if it asks ("which queues are paused" wants no pause_queue,
// "get a new API token" no get_api_token). Such a tool is the one meant,
// however long the description that would weigh its words down (Jira's
// create_issue, among 492 tools that say "issue").
func (ix *searchIndex) namedExactly(v *searchView, terms map[string]qterm, want intent, keep func(doc int32) bool) []int32 {
	var own, what, place []string
	for t, q := range terms {
		if q.own {
			own = append(own, t)
			if q.where {
				place = append(place, t)
			} else {
				what = append(what, t)
			}
		}
	}
	if len(own) == 0 {
		return nil
	}
	fits := func(d int32) bool {
		return v.visible[d] && keep(d) && (want == intentNone || ix.read[d] == (want == intentRead))
	}
	out := ix.named(own, want, fits)
	// "Open a bug in the PAY project": where it goes is no word of its
	// name, when the whole query names nothing, and no tool's name has
	// the other words and a word of the place ("list users in the admins
	// group": list_group_users, not list_users).
	if len(out) == 0 && len(what) >= 2 && len(place) > 0 && !ix.namesPlace(what, place, fits) {
		out = ix.named(what, want, fits)
	}
	return out
}

// namesPlace reports whether a tool that fits passes has every word of
// what in its name and a word of place, or of a synonym of one.
func (ix *searchIndex) namesPlace(what, place []string, fits func(d int32) bool) bool {
	for _, p := range place {
		for _, t := range append([]string{p}, synonyms[p]...) {
			for _, post := range ix.postings[t] {
				name := ix.names[post.doc]
				if slices.Contains(name, t) && fits(post.doc) && !slices.ContainsFunc(what, func(w string) bool { return !slices.Contains(name, w) }) {
					return true
				}
			}
		}
	}
	return false
}

// named are the tools that fits passes whose names are own's words, or
// failing that, when the query says what to do ("create a bug", "open a
// ticket": create_issue), those words with synonyms in their place.
// The synonyms tried are the first maxNamedTries combinations in an
// order the synonym table fixes, counted whether or not a tool has such
// a name, so that which tools are named never depends on a tool the
// caller cannot see.
func (ix *searchIndex) named(own []string, want intent, fits func(d int32) bool) []int32 {
	own = slices.Sorted(slices.Values(own))
	named := ix.byName[strings.Join(own, " ")]
	// "Create a new issue": a new one is what a create makes, no word of
	// the name.
	if i := slices.Index(own, stem("new")); len(named) == 0 && i >= 0 && want == intentWrite {
		named = ix.byName[strings.Join(slices.Delete(slices.Clone(own), i, i+1), " ")]
	}
	var out []int32
	for _, d := range named {
		if fits(d) {
			out = append(out, d)
		}
	}
	// "Image files" or "job runs" say no more than what they are about:
	// no upload_photo, no run_task.
	if len(out) > 0 || len(own) > maxNamedWords || want == intentNone {
		return out
	}
	// Each word's forms: itself, then its synonyms that are no other
	// word of the query nor one of theirs ("job runs": job is no task
	// beside run, a word of its group).
	opts := make([][]string, len(own))
	combos := 1
	for i, w := range own {
		opts[i] = append(opts[i], w)
		for _, syn := range synonyms[w] {
			clash := false
			for j, o := range own {
				if j != i && (syn == o || slices.Contains(synonyms[o], syn)) {
					clash = true
					break
				}
			}
			if !clash {
				opts[i] = append(opts[i], syn)
			}
		}
		combos *= len(opts[i])
	}
	var buf [maxNamedWords]string
	var key []byte
	seen := map[int32]bool{}
	for c := 1; c < min(combos, maxNamedTries); c++ { // 0 is the words themselves
		n, ok := c, true
		for i := len(own) - 1; i >= 0; i-- {
			buf[i] = opts[i][n%len(opts[i])]
			n /= len(opts[i])
			ok = ok && ix.nameTerms[buf[i]] // no tool's name has it: nothing to look up
		}
		if !ok {
			continue
		}
		words := buf[:len(own)]
		slices.Sort(words)
		key = key[:0]
		for k, w := range words {
			if k > 0 {
				key = append(key, ' ')
			}
			key = append(key, w...)
		}
		for _, d := range ix.byName[string(key)] {
			if !seen[d] && fits(d) {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// maxNamedWords bounds the query words whose synonyms are tried as a
// tool's name: a name is a few words, and the tries multiply.
const maxNamedWords, maxNamedTries = 3, 512

// related adds, for each of the query's own words, the words of the same
// root that a visible tool uses ("contributes": contributors, "review":
// reviewers, "automate": automation), at weightDerived, scored with the
// word itself, and the name words that initials no visible tool uses
// spell out (spelledOut), and the query's neighbouring words run
// together (runTogether) that a visible tool uses, at weightJoined. Only
// visible tools count, so what a caller cannot see changes nothing.
func (ix *searchIndex) related(v *searchView, weights map[string]qterm, joined []string) map[string]qterm {
	used := func(term string) bool {
		return slices.ContainsFunc(ix.postings[term], func(p posting) bool { return v.visible[p.doc] })
	}
	type rel struct {
		term  string
		group int32
	}
	next := int32(0) // the group after the query's last
	for _, w := range weights {
		next = max(next, w.group+1)
	}
	var found []rel
	var spelled []int32 // the groups of initials spelled out
	tries := 0
	for _, term := range slices.Sorted(maps.Keys(weights)) {
		w := weights[term]
		if w.w < 1 {
			continue
		}
		for _, d := range derived(term) {
			if used(d) {
				found = append(found, rel{d, w.group})
			}
		}
		// "rebuild", "redeploy": done again is done, when no tool has
		// the word itself.
		if base, ok := strings.CutPrefix(term, "re"); ok && len(base) > 3 && !used(term) && used(base) {
			found = append(found, rel{base, w.group})
		}
		// "PVCs", "the PDB": a short word no visible tool uses may be
		// the initials of words a tool's name runs through (persistent
		// volume claim); it asks for them, each as a word of the query.
		if w.own && tries < maxSpelled && maybeInitials(term) && !used(term) {
			tries++
			out := ix.spelledOut(v, term)
			if out != nil {
				spelled = append(spelled, w.group)
			}
			for _, t := range out {
				if _, ok := weights[t]; !ok {
					weights[t] = qterm{w: w.w, group: next, own: true, where: w.where}
					next++
				}
			}
		}
	}
	for _, t := range joined {
		if _, ok := weights[t]; !ok && used(t) {
			weights[t] = qterm{w: weightJoined, group: next, own: true}
			next++
		}
	}
	reached := map[int32]bool{} // groups some visible tool uses a term of
	for _, g := range spelled {
		reached[g] = true // the initials' words stand for them
	}
	for _, r := range found {
		reached[r.group] = true
		if _, ok := weights[r.term]; !ok {
			weights[r.term] = qterm{w: weightDerived, group: r.group}
		}
	}
	// A query word no visible tool uses, in any of its forms, may name the
	// caller's own data ("remove an article", "change the price of a
	// product"): an API that stores what its users define calls such a
	// thing an item, an entry or a row. Those words are asked for once, as
	// one more query word, however many words went unmatched, and only of
	// tools the query's other words reached: the unmatched word is as
	// likely a word no API uses, which must not bring up a tool on its
	// own. A number ("job 42") is a value, not a name of anything.
	var own []int32
	last := int32(-1)
	for term, w := range weights {
		last = max(last, w.group)
		if w.w >= 1 && !isNumber(term) {
			own = append(own, w.group)
		}
		if !reached[w.group] && used(term) {
			reached[w.group] = true
		}
	}
	if slices.ContainsFunc(own, func(g int32) bool { return !reached[g] }) {
		for _, t := range genericRecord {
			if _, ok := weights[t]; !ok && used(t) {
				weights[t] = qterm{w: weightGeneric, group: last + 1, onlyReached: true}
			}
		}
	}
	return weights
}

// spelledOut gives the words that the initials term stands for in the
// names of v's tools (pvc: persistent, volume, claim): the run of name
// words whose first letters spell it that most tools' names hold, if
// two or more do, or nil. A name's words are its distinct terms in
// order, stop words left out. A run that starts with a verb
// (delete_milestone) names what is done, not a thing: "DM" is no
// delete milestone.
func (ix *searchIndex) spelledOut(v *searchView, term string) []string {
	count := map[[4]string]int{}
	for d, names := range ix.names {
		if !v.visible[d] {
			continue
		}
	runs:
		for i := 0; i+len(term) <= len(names); i++ {
			for k := range len(term) {
				if names[i+k][0] != term[k] {
					continue runs
				}
			}
			if verbIntents[names[i]] != intentNone {
				continue
			}
			var key [4]string
			copy(key[:], names[i:i+len(term)])
			count[key]++
		}
	}
	var best [4]string
	n := 1 // one tool's name is not enough
	for key, c := range count {
		if c > n || c == n && c > 1 && slices.Compare(key[:], best[:]) < 0 {
			best, n = key, c
		}
	}
	if best[0] == "" {
		return nil
	}
	return slices.Clone(best[:len(term)])
}

// maybeInitials reports whether a query's term may be initials: two to
// four consonants, as a word of English has a vowel, and none of the
// words that are known (with synonyms, or notInitials).
func maybeInitials(term string) bool {
	return len(term) >= 2 && len(term) <= 4 && !hasVowel(term) && len(synonyms[term]) == 0 && !notInitials[term] &&
		strings.IndexFunc(term, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
}

// runTogether gives the stems of each two neighbouring words of query
// run together ("watch list": watchlist, "add-on": addon), for an API
// that writes them as one: words, not numbers, the second no stop word
// but a particle, and no phrase ("set up" asks for a create, "pull
// request" for a pull), nor inside a quoted name. The query is read
// lower-cased, so a camelCase word ("SalesLoft") stays one word.
func runTogether(query string) []string {
	_, rest := splitQuoted(query)
	ws := words(strings.ToLower(rest))
	var out []string
	for i := 0; i+1 < len(ws) && len(out) < maxQueryTerms; i++ {
		a, b := ws[i], ws[i+1]
		if stopWords[a] || stopWords[b] && !particles[b] || isNumber(a) || isNumber(b) {
			continue
		}
		if _, phrase := phrasesByStem[stem(a)+" "+b]; phrase {
			continue
		}
		if t := stem(a + b); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// particles are the stop words that end a word run together: an add-on,
// a check-in, a sign-up, a rollout.
var particles = map[string]bool{"on": true, "in": true, "up": true, "out": true, "off": true, "over": true}

// weightJoined is what two words run together weigh, as one more word
// of the query; chosen among 0.5 and 1.0 on the read sets.
const weightJoined = 0.5

// maxSpelled bounds the terms one query tries as initials, as each try
// reads the names of every visible tool; it adds at most four words.
const maxSpelled = 3

// notInitials are words of no vowel that are no initials: units, as
// stemmed (gbps: gbp), and the end of a contraction (I'll).
var notInitials = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("kb mb gb tb pb kbps mbps gbps ms ns hz khz mhz ghz px kg mg km cm mm hr hrs rpm rps qps tps ll") {
		m[stem(w)] = true
	}
	return m
}()

// resultFields calls f with the name of each property of an output
// schema to depth levels under its root, through arrays' items.
func resultFields(schema map[string]any, depth int, f func(name string)) {
	if depth > resultDepth {
		return
	}
	if items, ok := schema["items"].(map[string]any); ok {
		resultFields(items, depth, f)
	}
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		f(name)
		if m, ok := p.(map[string]any); ok {
			resultFields(m, depth+1, f)
		}
	}
}

// isNumber reports whether a term is digits only ("42", "٤٢").
func isNumber(term string) bool {
	for _, r := range term {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return term != ""
}

// holdsRecords reports whether a path has a segment that is a generic
// record word on its own (/items/{collection}, /folders/{id}/items): the
// API stores its users' records under that word. A word inside a
// compound segment (/checkItem) names a thing of the API's own; a format
// or a method after it (/items.json, /items:batchGet) is none.
func holdsRecords(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		seg, _, _ = strings.Cut(seg, ".")
		seg, _, _ = strings.Cut(seg, ":")
		if ts := terms(seg); len(ts) == 1 && slices.Contains(genericRecord, ts[0]) {
			return true
		}
	}
	return false
}

// selfTool tells whether a tool says who the caller is: a read of a
// fixed path, with no required argument, that ends in "me" under a
// collection of people (/users/me, /members/me, /users/current), or
// alone (/me, /myself, /whoami), or OpenID Connect's userinfo, or
// the check of the caller's own credentials that Twitter's API and the
// fediverse's give (/accounts/verify_credentials), 2; or in
// the caller's own user, profile or account (GET /user, /v2/account,
// /user/profile, 1: some APIs' GET /user reads any user by a query).
// /permissions/me is my permissions, /brands/current the current brand,
// /v1/current.json the current weather, /meta/types/user a type: none
// says who I am (0).
func selfTool(d *catalog.Tool) uint8 {
	if d.Request.Method != http.MethodGet {
		return 0
	}
	if meByKey(d) {
		return 1
	}
	if req, _ := d.Input["required"].([]any); len(req) > 0 || strings.Contains(d.Request.Path, "{") {
		return 0
	}
	var segs []string
	for seg := range strings.SplitSeq(bareRoute(d.Request.Path), "/") {
		seg, _, _ = strings.Cut(strings.ToLower(seg), ".") // /user.json
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	if len(segs) == 0 {
		return 0
	}
	last, prev := segs[len(segs)-1], ""
	for _, s := range slices.Backward(segs[:len(segs)-1]) {
		if !prefixSegment(s) {
			prev = s
			break
		}
	}
	switch {
	case last == "userinfo",
		(last == "me" || last == "myself" || last == "whoami") && prev == "",
		(last == "me" || last == "self" || last == "current" || last == "verify_credentials") && people[prev]:
		return 2
	case (last == "user" || last == "profile" || last == "account" || last == "identity") && (prev == "" || prev == "user" || prev == "users"):
		return 1
	}
	return 0
}

// meByKey tells whether a read of one thing by its key takes "me" for
// the caller's own: GET /users/{user_gid} whose argument says it can be
// the string "me" (Asana, Zoom; Square's current merchant). Only the
// path's last segment may be a key, and no other argument be required.
func meByKey(d *catalog.Tool) bool {
	path := strings.TrimRight(d.Request.Path, "/")
	i := strings.LastIndexByte(path, '/')
	last := path[i+1:]
	if !strings.HasPrefix(last, "{") || !strings.HasSuffix(last, "}") || strings.Contains(path[:i+1], "{") {
		return false
	}
	name := last[1 : len(last)-1]
	if req, _ := d.Input["required"].([]any); len(req) > 1 || len(req) == 1 && req[0] != name {
		return false
	}
	props, _ := d.Input["properties"].(map[string]any)
	arg, _ := props[name].(map[string]any)
	desc, _ := arg["description"].(string)
	return quotedMe.MatchString(desc)
}

// quotedMe is "me" quoted as a value: "me", 'me', `me`.
var quotedMe = regexp.MustCompile("[\"'`]me[\"'`]")

// createsInto tells whether a tool is a POST whose path ends in a
// collection rather than a key or an action: POST /customers makes one,
// POST /customers/{id} and POST /customers/{id}/cancel change one.
func createsInto(d *catalog.Tool) bool {
	if d.Request.Method != http.MethodPost {
		return false
	}
	path := bareRoute(d.Request.Path)
	last := path[strings.LastIndexByte(path, '/')+1:]
	if last == "" || strings.Contains(last, "{") {
		return false
	}
	// An action on what exists (/invoices/{id}/send, /tokens/rotate).
	ws := words(last)
	return !(len(ws) == 1 && verbIntents[stem(ws[0])] != intentNone)
}

// asksToCreate reports whether a query orders a thing made: its first
// word that is no stop word is create or a word of its group ("add a
// customer", "open a ticket", "new webhook"), or it files one ("file a
// bug", makesLeading); "make bob an admin" makes nothing.
func asksToCreate(ws []string, query string) bool {
	if makesLeading(query) >= 0 {
		return true
	}
	for _, w := range ws {
		if stopWords[w] {
			continue
		}
		// "Make bob an admin" changes bob (turnsInto).
		if w == "make" && turnsInto(query) {
			return false
		}
		t := stem(w)
		return t == stem("create") || slices.Contains(synonyms[stem("create")], t)
	}
	return false
}

// bareRoute is a request path without its query, its fragment
// (/files/{id}#add_shared_link) and a trailing slash.
func bareRoute(path string) string {
	path, _, _ = strings.Cut(path, "?")
	path, _, _ = strings.Cut(path, "#")
	return strings.TrimRight(path, "/")
}

// people are the collections whose "me" is the caller.
var people = map[string]bool{"user": true, "users": true, "member": true, "members": true, "account": true, "accounts": true, "people": true, "person": true, "profiles": true}

// prefixSegment reports whether a path segment only says where an API
// lives: api, rest, a version (v2, 3, 2010-04-01).
func prefixSegment(s string) bool {
	if s == "api" || s == "rest" {
		return true
	}
	s = strings.TrimPrefix(s, "v")
	return s != "" && strings.Trim(s, "0123456789.-") == ""
}

// asksWhoAmI reports whether a query asks who the caller is: "who am
// I?", "whoami", "what am I logged in as", or which account, or whose,
// this or my token or key is ("which account is this token for?",
// "which user does this API key belong to?"). Quoted words are a name's
// (splitQuoted), so a song called "Who Am I" asks nothing of the kind. Not: "who am I following?" (the caller's follows),
// "users logged in as admin" (no first person), "the API key of user
// bob" (another's key), "this deploy key" (a key of its own kind).
func asksWhoAmI(clean string) bool {
	_, unquoted := splitQuoted(clean)
	ws := words(unquoted)
	has := func(set ...string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return slices.Contains(set, w) })
	}
	firstPerson := false
	credential := false
	for i, w := range ws {
		next := func(k int) string {
			if i+k < len(ws) {
				return ws[i+k]
			}
			return ""
		}
		switch {
		case w == "whoami":
			return true
		case w == "who" && (next(1) == "am" && next(2) == "i" || next(1) == "i" && next(2) == "am"):
			// Only how one is signed in may follow: "who am I
			// following" asks about others.
			rest := ws[i+3:]
			if !slices.ContainsFunc(rest, func(w string) bool { return !stopWords[w] && !signedInWords[w] }) {
				return true
			}
		case (w == "logged" || w == "signed" || w == "authenticated") && (next(1) == "as" || next(1) == "in" && (next(2) == "as" || next(2) == "with")):
			if firstPerson || credential {
				return true
			}
		case w == "i" || w == "am":
			firstPerson = true
		case w == "this" || w == "my":
			k := 1
			if n := next(k); n == "api" || n == "access" || n == "auth" || n == "bearer" || n == "personal" {
				k++
			}
			credential = credential || slices.Contains([]string{"token", "key", "credential", "credentials"}, next(k))
		}
	}
	if !credential {
		return false
	}
	if has("whose", "belong", "belongs") {
		return true
	}
	// "which account", "what user": the question is about the owner.
	for i := 0; i+1 < len(ws); i++ {
		if (ws[i] == "which" || ws[i] == "what") && (ws[i+1] == "account" || ws[i+1] == "user" || ws[i+1] == "identity") {
			return true
		}
	}
	return false
}

// signedInWords may follow "who am I" in a question that still asks who
// the caller is: "who am I logged in as right now".
var signedInWords = map[string]bool{"logged": true, "signed": true, "authenticated": true, "right": true, "exactly": true}

// genericRecord are the words an API uses for a record of its users' own
// making. "record" is not one of them: it names an audit or a DNS record
// as often.
var genericRecord = stemAll([]string{"item", "entry", "row"})

// derived are the words a stem may share its root with.
func derived(term string) []string {
	var out []string
	for _, suffix := range derivations {
		out = append(out, term+suffix)
		if base, ok := strings.CutSuffix(term, suffix); ok && len(base) > 2 {
			out = append(out, base)
		}
	}
	// recently: recent, publicly: public; not apply: app.
	if base, ok := strings.CutSuffix(term, "ly"); ok && len(base) > 3 {
		out = append(out, base)
	}
	// register: registration, administer: administration; -ster only,
	// as an integer is no integration.
	if base, ok := strings.CutSuffix(term, "er"); ok && len(base) > 2 && strings.HasSuffix(base, "st") {
		out = append(out, base+"ration")
	}
	if base, ok := strings.CutSuffix(term, "ration"); ok && len(base) > 2 && strings.HasSuffix(base, "st") {
		out = append(out, base+"er")
	}
	return out
}

// "enc" and "anc" are -ence and -ance as stem leaves them (reference:
// referenc); "y" makes an adjective (healthy: health).
var derivations = []string{"or", "er", "ion", "ation", "ment", "al", "ency", "enc", "ent", "anc", "y"}

// better orders hits: higher score first, then catalog order.
func better(a, b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// scratch is a search's working memory, pooled: at 10,000 tools it
// would otherwise be 240 KB a search.
type scratch struct {
	score   []float64 // per document, all zero between searches
	touched []int32   // the documents scored
	best    []float64 // per document, the best of one query word's terms
	inGroup []int32   // the documents one query word reached
}

func (ix *searchIndex) scratch() *scratch {
	if s, ok := ix.scores.Get().(*scratch); ok {
		return s
	}
	n := len(ix.length)
	return &scratch{score: make([]float64, n), best: make([]float64, n)}
}

// intent is the kind of tool a query asks for.
type intent int8

const (
	intentNone intent = iota
	intentRead
	intentWrite
)

// queryIntent reads what a query asks to do from how it starts: a
// question asks to read; otherwise an order starts with its verb ("list
// the runs": read; "rotate the secret", "reply to an issue": write), or
// the phrasal verb it starts ("get rid of": write). Only the first word
// of a clause counts, as many nouns are verbs too ("recent CI runs"):
// the first clause's, or, when that one orders nothing but states how
// things stand (states), the first of a later clause that starts with a
// verb in its base form ("mchen is out Dec 24-26, set up an override":
// what is the case is told first, then what to do; "my PRs, merged
// ones" orders nothing). The caller reads the query with each value as
// one word (valuesAs), so that an identifier's pieces part no phrasal
// verb ("get message 18d44e01a9c3 back"). But for three
// readings of the whole: getting a credential (gettingCredential),
// asking to be told when something happens (asksToBeTold: a write) and
// asking for something each time something happens (onEachEvent: a
// write). A task names its verb in the user's words, which a tool's text
// often does not share, but the kind of operation it wants is plain.
func queryIntent(query string) intent {
	ws := words(query)
	// "Can you email it to them again?" asks for it to be done.
	if in := politeOrder(ws); in != intentNone {
		return in
	}
	if isQuestion(query) {
		return intentRead
	}
	if in, ok := gettingCredential(query); ok {
		return in
	}
	if asksToBeTold(ws) || onEachEvent(ws) || makesLeading(query) >= 0 {
		return intentWrite // "email me when ...", "ping us whenever ...": set it up
	}
	in := leadingVerb(ws)
	if in != intentNone {
		return in
	}
	ends := clauseEnds(query)
	if len(ends) == 0 || !states(ws[:ends[0]]) {
		return intentNone // "recent CI runs, sorted by date": no order
	}
	for i := 0; i < len(ends) && ends[i] < len(ws); i = ends[i] {
		later := ws[ends[i]:ends[ends[i]]]
		j := slices.IndexFunc(later, func(w string) bool { return !stopWords[w] })
		if j < 0 || verbBase(later[j]) != later[j] {
			continue // "..., merged ones", "..., restarted today"
		}
		if in := leadingVerb(ws[ends[i]:]); in != intentNone {
			return in
		}
	}
	return intentNone
}

// states reports whether a clause says how things stand, as a sentence
// with its subject or its verb does ("mchen is out", "I need to",
// "someone keeps spamming"), rather than naming what it is about ("recent
// CI runs", "my PRs").
func states(clause []string) bool {
	return slices.ContainsFunc(clause, func(w string) bool { return statesWords[w] })
}

// statesWords are the subjects and the verbs that make a clause a
// statement (states). "'s" is left out: "Marco's PRs" names.
var statesWords = map[string]bool{
	"i": true, "we": true, "you": true, "he": true, "she": true, "they": true, "someone": true, "somebody": true, "nobody": true, "everyone": true,
	"is": true, "are": true, "was": true, "were": true, "am": true, "re": true, "m": true, "been": true,
	"has": true, "have": true, "had": true, "need": true, "needs": true, "keep": true, "keeps": true, "want": true, "wants": true,
	"should": true, "must": true, "can": true, "could": true, "will": true, "would": true, "does": true, "did": true,
}

// politeOrder is the intent of a request put as a question: "can you
// resend it?", "could you please archive the board?". The verb after
// "you" says what is asked, as a leading verb does; one that tells
// ("email it to them") sends.
func politeOrder(ws []string) intent {
	for i := 0; i+2 < len(ws); i++ {
		if !politeWords[ws[i]] || ws[i+1] != "you" {
			continue
		}
		j := i + 2
		for j < len(ws) && (ws[j] == "please" || ws[j] == "just" || ws[j] == "also") {
			j++
		}
		if j == len(ws) {
			return intentNone
		}
		if sendVerbs[ws[j]] {
			return intentWrite
		}
		return verbIntents[stem(ws[j])]
	}
	return intentNone
}

// sendVerbs are nouns that, after "can you", send: "can you email it".
var sendVerbs = map[string]bool{"email": true, "mail": true, "text": true, "message": true, "dm": true, "notify": true}

// politeWords put an order as a question: "can you", "would you".
var politeWords = map[string]bool{"can": true, "could": true, "would": true, "will": true}

// makesLeading finds the verb that starts an order by making the thing
// it names with an article: "file a bug", "raise a ticket", "cut a
// release", "log a defect", "leave a comment". It returns the verb's
// index among words(query), or -1. Without the article the same words
// say other things ("the file", "cut the price", "leave the team").
func makesLeading(query string) int {
	toks, at := tokens(query)
	for i, tok := range toks {
		if determiners[tok] { // "the file a user sent" orders nothing
			return -1
		}
		if stopWords[tok] {
			continue
		}
		things, ok := makesWith[tok]
		if !ok || i+1 >= len(toks) || toks[i+1] != "a" && toks[i+1] != "an" && !newWords[toks[i+1]] {
			return -1
		}
		// "Leave a comment" makes one, "leave a team" leaves it: a verb
		// that makes only some things needs one of them next.
		if things != nil && !slices.ContainsFunc(toks[i+1:min(len(toks), i+4)], func(t string) bool { return things[stem(t)] }) {
			return -1
		}
		ws := words(query)
		n := wordIndex(query, ws, at[i], tok)
		if n < 0 {
			return -1
		}
		// A phrasal verb says what it does, as in leadingVerb: "log a
		// user out" signs one out, it makes nothing.
		if p, _ := phraseAt(ws, n, nil); p != nil {
			return -1
		}
		return n
	}
	return -1
}

// inflected reports whether the first word of ws other than a stop word
// is inflected as no order's verb is ("looks", "failed", "running").
func inflected(ws []string) bool {
	for _, w := range ws {
		if stopWords[w] {
			continue
		}
		return verbBase(w) != w || strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")
	}
	return false
}

var determiners = map[string]bool{"the": true, "a": true, "an": true, "this": true, "that": true, "these": true, "those": true,
	"my": true, "our": true, "your": true, "their": true, "its": true, "his": true, "her": true, "some": true, "any": true}

// makesWith are the verbs that make what follows their article, with
// the (stemmed) things they make when not everything: one leaves a
// comment but not a team, raises a ticket but not a quota.
var makesWith = map[string]map[string]bool{"file": nil, "cut": nil, "log": nil, "lodge": nil, "report": nil,
	"leave": stemSet("comment note review message reply feedback rating reaction remark"),
	"raise": stemSet("ticket issue bug incident alert alarm request pr concern flag question case defect"),
}

// tokens splits query into lower-case tokens that keep their
// apostrophes ("let's" is no stop word), and where each starts in query.
func tokens(query string) (toks []string, at []int) {
	for i := 0; i < len(query); {
		j := i
		for j < len(query) {
			r, size := utf8.DecodeRuneInString(query[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' {
				break
			}
			j += size
		}
		if j == i {
			_, size := utf8.DecodeRuneInString(query[i:])
			i += size
			continue
		}
		toks, at = append(toks, strings.ToLower(query[i:j])), append(at, i)
		i = j
	}
	return toks, at
}

// opensExisting finds a leading "open" that opens what exists to read
// it: "open message 18c2f0a9b7d4 and tell me what it says", "open the
// settings", "open my drafts". It returns the verb's index among
// words(query), or -1. "Open a ticket" and "open new tabs" make one, and
// "open port 443" opens a port: only the, this, my and their kin, or an
// identifier the query quotes (valued: withoutValues took one out), say
// the thing exists.
func opensExisting(query string, valued bool) int {
	toks, at := tokens(query)
	for i, tok := range toks {
		if stopWords[tok] {
			continue
		}
		if tok != "open" || i+1 == len(toks) || !definite[toks[i+1]] && !valued {
			return -1
		}
		if next := toks[i+1]; next == "a" || next == "an" || newWords[next] || next == "up" {
			return -1
		}
		return wordIndex(query, words(query), at[i], tok)
	}
	return -1
}

// wordIndex is the index among ws, words(query), of the token tok that
// starts at byte at, or -1. words may part a token in two ("InTo": in,
// to; "FiLe": fi, le) as it drops one letter: count the words up to
// where the token starts, and take it only as a word of its own.
func wordIndex(query string, ws []string, at int, tok string) int {
	n := len(words(query[:at]))
	if n >= len(ws) || ws[n] != tok {
		return -1
	}
	return n
}

// openWord is "open" as a word, for opensExisting's reading of it.
var openWord = regexp.MustCompile(`(?i)\bopen\b`)

// definite are the words before a thing that exists.
var definite = map[string]bool{"the": true, "this": true, "that": true, "these": true, "those": true, "my": true, "our": true, "your": true, "his": true, "her": true, "their": true, "its": true}

// stemSet is the set of the stems of words.
func stemSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[stem(w)] = true
	}
	return set
}

// leadingVerb is the kind of tool an order's verb asks for: that of its
// first word other than a stop word, or of the phrasal verb that word
// starts.
func leadingVerb(ws []string) intent {
	for i, w := range ws {
		if stopWords[w] {
			continue
		}
		if sendsAt(ws) == i {
			return intentWrite
		}
		// "I exported my meetings as iCal, bring them in", "we just
		// signed up": what was done is told, not asked for.
		if past(w) && slices.ContainsFunc(ws[:i], func(w string) bool { return w == "i" || w == "we" }) {
			return intentNone
		}
		// A phrasal verb does what it stands for: "get rid of" and
		// "get it back" write, though "get" reads.
		if p, _ := phraseAt(ws, i, nil); p != nil {
			if len(p) == 0 {
				return intentNone // a state: "already set up webhooks"
			}
			if in := verbIntents[p[0]]; in != intentNone {
				return in
			}
		}
		// "Give me all our workflows", "give me a list of projects"
		// read; "give me a URL to call" makes one, "give bob access"
		// grants it.
		if w == "give" && i+2 < len(ws) && (ws[i+1] == "me" || ws[i+1] == "us") && givesWhatIs[ws[i+2]] {
			return intentRead
		}
		// "End of month invoices": a noun, not the verb that changes
		// ("list of open runs" still asks to read).
		in := verbIntents[stem(w)]
		if in == intentWrite && i+1 < len(ws) && ws[i+1] == "of" {
			return intentNone
		}
		return in
	}
	return intentNone
}

// sendsAt finds the verb that starts an order to send a message by its
// medium: "text +1555… that it shipped", "sms them the code", "dm me".
// It returns the verb's index among ws, or -1. The verb comes first,
// and a number, whom to send to or nothing follows it: "text of the
// reply", "text to speech", "text fields" and "sms logs" order nothing.
func sendsAt(ws []string) int {
	for i, w := range ws {
		if stopWords[w] {
			continue
		}
		if sends[w] == nil {
			return -1
		}
		if i+1 < len(ws) && !sendsTo[ws[i+1]] && !isNumber(ws[i+1]) {
			return -1
		}
		return i
	}
	return -1
}

// sendsTo are the words for whom a message is sent to, after its verb.
var sendsTo = map[string]bool{"me": true, "him": true, "her": true, "them": true, "us": true, "everyone": true, "everybody": true}

// sends are the media whose name is a verb to send by them, and what
// such an order asks for.
var sends = map[string][]string{"text": stemAll([]string{"send", "message", "sms"}), "sms": stemAll([]string{"send", "message", "sms"}), "dm": stemAll([]string{"send", "message"})}

// givesWhatIs are the words after "give me" that point at what exists.
var givesWhatIs = map[string]bool{"the": true, "all": true, "every": true, "each": true, "our": true, "my": true, "your": true, "their": true,
	"those": true, "these": true, "its": true, "list": true, "count": true, "summary": true, "overview": true, "report": true, "breakdown": true}

// phraseAt finds the phrasal verb that ws[i] starts, whose second word
// may stand up to maxPhraseGap words after it ("sign a user out"), among
// the words free allows (nil: any): the terms it stands for and where
// its second word is, or nil.
func phraseAt(ws []string, i int, free func(j int) bool) ([]string, int) {
	// An -ed or -ing form is the verb too ("signed up", "taking out"),
	// but "logs in production" is no "log in".
	inflected := ""
	if base := verbBase(ws[i]); base != ws[i] {
		inflected = stem(base)
	}
	last := i + maxPhraseGap + 1
	if stopWords[ws[i]] {
		last = i + 1 // "at once", not "at most once"
	}
	for j := i + 1; j < min(len(ws), last+1); j++ {
		p, ok := phrases[ws[i]+" "+ws[j]]
		if !ok && inflected != "" {
			p, ok = phrasesByStem[inflected+" "+ws[j]]
		}
		if ok && j > i+1 && (phrasesTogether[stem(ws[i])+" "+ws[j]] || phrasesTogether[inflected+" "+ws[j]]) {
			continue
		}
		if ok && j > i+1 {
			// "Kick off the build" starts it; "kick bob off the team"
			// removes him.
			if q, apart := phrasesApart[stem(ws[i])+" "+ws[j]]; apart {
				p = q
			} else if q, apart := phrasesApart[inflected+" "+ws[j]]; apart {
				p = q
			}
		}
		if ok && (free == nil || free(j)) {
			// "Log me in as her", "sign in as bob": to act as another
			// user, which APIs call impersonation ("logged in as" says
			// who one is).
			if inflected == "" && j+2 < len(ws) && ws[j+1] == "as" && actsAs(ws[j+2]) && slices.Equal(p, phrases["log in"]) {
				return actAs, j
			}
			// "The hooks I have set up", "is it set up": a state, not
			// a thing to make; the phrase asks for nothing.
			if slices.Equal(p, phrases["set up"]) && stated(ws, i) {
				return []string{}, j
			}
			return p, j
		}
	}
	return nil, 0
}

// actAs is what logging in as another user asks for.
var actAs = stemAll([]string{"impersonate", "impersonation"})

// actsAs reports whether the word after "log in as" names someone:
// "as her", "as bob", not "as soon as", "as well" or "as an admin".
func actsAs(w string) bool {
	return sendsTo[w] || !stopWords[w] && !asWords[w] && !isNumber(w)
}

// asWords make "as" part of a phrase of their own after "log in".
var asWords = map[string]bool{"soon": true, "well": true, "usual": true, "before": true, "always": true, "normal": true,
	"normally": true, "expected": true, "possible": true, "long": true, "much": true, "often": true, "quickly": true, "fast": true}

// pronouns name someone a query has spoken of.
var pronouns = map[string]bool{"i": true, "we": true, "you": true, "he": true, "she": true, "they": true, "it": true, "everyone": true, "anyone": true}

// stated reports whether the verb at ws[i] says how things are: right
// after a stateWord ("have set up", "already set up"), or after a form of
// "be" a few words back in the same clause ("is the webhook set up").
func stated(ws []string, i int) bool {
	if i > 0 && stateWords[ws[i-1]] {
		return true
	}
	for k := i - 1; k >= max(0, i-5); k-- {
		switch {
		case beWords[ws[k]]:
			return true
		case clauseWords[ws[k]] || mayWords[ws[k]]:
			return false
		}
	}
	return false
}

// beWords are the forms of "be" that make a passive: "is it set up".
var beWords = map[string]bool{"is": true, "are": true, "was": true, "were": true, "been": true, "be": true}

// clauseWords end the words a verb's "be" may stand among.
var clauseWords = map[string]bool{"to": true, "and": true, "so": true, "do": true, "please": true, "then": true, "let": true}

// stateWords right before a phrasal verb make it say how things are:
// "have set up", "already set up" (a form of "be" does from further
// back: beWords).
var stateWords = map[string]bool{"have": true, "has": true, "had": true, "got": true, "already": true, "currently": true}

// verbBase strips an -ed or -ing ending as stem does, whole words
// ("setting") included: "setting up" is "set up".
func verbBase(w string) string {
	n := len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return undouble(w[:n-2])
	}
	return w
}

// gettingCredential reads a query that starts by asking to get a
// credential it does not name: "get a new token" or "get another API key"
// asks for one to be minted, a write; "get a deploy key" may as well read
// one that exists ("Get a repository secret" is how GitHub names the
// read), so it says neither (intentNone). ok is false for any other query,
// "get the token of this app" included.
func gettingCredential(query string) (in intent, ok bool) {
	toks := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for len(toks) > 0 && stopWords[toks[0]] {
		toks = toks[1:]
	}
	if len(toks) < 2 || toks[0] != "get" {
		return intentNone, false
	}
	if toks[1] == "me" || toks[1] == "us" { // "get me a new token"
		toks = toks[1:]
		if len(toks) < 2 {
			return intentNone, false
		}
	}
	rest := toks[1:min(5, len(toks))]
	article := rest[0] == "a" || rest[0] == "an"
	if article {
		rest = rest[1:]
	}
	minted := len(rest) > 0 && newWords[rest[0]]
	if !article && !minted {
		return intentNone, false
	}
	for _, w := range rest {
		// A word of the secret or the certificate group.
		for _, g := range [...]string{stem("secret"), stem("certificate")} {
			if t := stem(w); t == g || slices.Contains(synonyms[g], t) {
				if minted {
					return intentWrite, true
				}
				return intentNone, true
			}
		}
	}
	return intentNone, false
}

// newWords come before a thing that does not exist yet. The tokens of
// gettingCredential are its own, as words drops "a".
var newWords = map[string]bool{"new": true, "another": true, "fresh": true}

// aboutOne reports whether a query is about one thing it points at: "this
// pool", "job 42", "run #17", or an identifier it quotes. Such a query
// wants a tool whose path takes a key (GET /pools/{id}, GET
// /users/{id}/groups) rather than a top-level collection (GET /pools).
// "that" does not point (it is as often a relative pronoun: "the runs
// that failed"), nor does a number that is part of a word (ec2, oauth2)
// or that counts or dates ("the last 10 deploys", "in 2024"). clean is
// withoutValues(query), read once per search.
func aboutOne(query, clean string) bool {
	if clean != query {
		return true
	}
	tokens := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '#'
	})
	for i, tok := range tokens {
		if tok == "this" {
			return true
		}
		if n := strings.TrimPrefix(tok, "#"); i > 0 && isNumber(n) {
			if prev := tokens[i-1]; !stopWords[prev] && !quantityWords[prev] {
				return true
			}
		}
	}
	return false
}

// quantityWords come before a number that counts or dates, not one that
// names a thing ("the last 10 runs", "since 2024").
var quantityWords = map[string]bool{"last": true, "first": true, "top": true, "past": true, "next": true, "since": true,
	"before": true, "after": true, "until": true, "every": true, "latest": true, "newest": true, "recent": true, "only": true, "over": true, "under": true}

// verbIntents maps a stemmed verb to the kind of tool it asks for.
var verbIntents = map[string]intent{}

// isQuestion reports whether query asks something rather than orders it.
func isQuestion(query string) bool {
	if strings.HasSuffix(strings.TrimSpace(query), "?") {
		return true
	}
	ws := words(query)
	return len(ws) > 0 && questionStarts[ws[0]] && !causative(ws)
}

// causative reports whether ws, starting with "have", orders something
// done rather than asks whether it was: "have our bot post to the
// channel", "have the team review it", where a verb in its base form
// follows within a few words ("have we deployed", "have the runs
// finished" ask).
func causative(ws []string) bool {
	if ws[0] != "have" {
		return false
	}
	for _, w := range ws[1:min(len(ws), 5)] {
		if verbIntents[stem(w)] != intentNone {
			return verbBase(w) == w && !strings.HasSuffix(w, "s")
		}
	}
	return false
}

var questionStarts = map[string]bool{}

// cover is the share of doc's name terms the query asks for, each
// counted at its query weight.
func (ix *searchIndex) cover(doc int32, weights map[string]qterm) float64 {
	name := ix.names[doc]
	if len(name) == 0 {
		return 0
	}
	var c float64
	for _, t := range name {
		c += weights[t].w
	}
	return c / float64(len(name))
}

// queryTerms turns a query into weighted terms: its own words at 1 (at
// weightNamed a word of a hyphen-joined or quoted name, and "new"), the
// words its phrasal verbs stand for ("sign out": logout; none inside a
// name) at 1 too; the synonyms of all of them at weightSynonym times their
// word's weight, "update" at weightUpdate for a verb that changes a state;
// what a question word asks for ("who": users), the alert of "email me
// when" and the webhook of "ping our chat whenever", each as one more
// query word (a word's own weight wins); "make bob an admin" asks to
// update. Each term belongs to the query word it stands for (its group),
// and a tool scores the best term of each group. clean is the query
// withoutValues; one is aboutOne: when the query points at one thing,
// "what is" asks about it rather than for a list.
func queryTerms(clean string, one bool) map[string]qterm {
	out := map[string]qterm{}
	var own []string
	var ownW []float64
	where := false // past a word that says where (whereWords)
	addOwn := func(t string, w float64) {
		if q, dup := out[t]; dup {
			// Said again at more weight ("so she can comment, then
			// add a comment"): the heavier counts.
			if q.own && w > q.w {
				q.w, ownW[q.group] = w, w
				out[t] = q
			}
		} else if len(own) < maxQueryTerms {
			out[t] = qterm{w: w, group: int32(len(own)), own: true, where: where}
			own = append(own, t)
			ownW = append(ownW, w)
		}
	}
	text := todo.ReplaceAllString(contracted.Replace(clean), "todo$1")
	ws := words(text)
	named := namedWords(text)
	partOf := numbersInWords(text)
	var values []string // numbers on their own, searched for only when nothing else is
	purpose := 0        // the end of a purpose clause ("so she can edit it")
	// What a word asks for beside itself and its synonyms, by its group:
	// a "share" that gives access (sharesAccess), a "point" at a target
	// (pointsAt).
	also := map[int32][]string{}
	used := make([]bool, len(ws))
	var clauseEnd []int // read once a negator comes
	// turnsInto reads the whole text: once, however many times "make"
	// comes ("make make make ..." would read it once for each).
	into, intoRead := false, false
	turned := int32(-1) // the group of a "make" that turns (turnsInto)
	// "File a bug" asks to create one; "file" is no file.
	if i := makesLeading(text); i >= 0 && i < len(ws) {
		addOwn(stem("create"), 1)
		used[i] = true
	}
	// "Text +1555… that it shipped" asks to send a message.
	if i := sendsAt(ws); i >= 0 {
		for _, t := range sends[ws[i]] {
			addOwn(t, 1)
		}
		used[i] = true
	}
	for i, w := range ws {
		where = where || whereWords[w]
		if used[i] {
			continue
		}
		// "Post the summary in #releases": a message, to a channel.
		if (w == "post" || w == "announce") && slices.Contains(ws[i+1:], "channel") {
			addOwn(stem("message"), 1)
		}
		// "Is Tom on do not disturb?": a setting's name, no negation.
		if w == "not" && i > 0 && ws[i-1] == "do" && i+1 < len(ws) && ws[i+1] == "disturb" {
			addOwn("dnd", 1)
			used[i+1] = true
			continue
		}
		// "Suspend the account, don't delete anything": what is not to
		// be done is not asked for.
		if negators[w] {
			if clauseEnd == nil {
				// The same words, so the same count (FuzzSearchQueryCheck);
				// were it not, the clause would be the rest of the query.
				if clauseEnd = clauseEnds(text); len(clauseEnd) != len(ws) {
					clauseEnd = slices.Repeat([]int{len(ws)}, len(ws))
				}
			}
			// One that ends its clause ("don't, please, delete it",
			// "never: delete") reaches into the next.
			end := clauseEnd[i]
			if end == i+1 {
				end = len(ws)
			}
			for j := i + 1; j < end; j++ {
				if !stopWords[ws[j]] {
					used[j] = true
					break
				}
			}
			continue
		}
		// "Share it with anna so she can edit it": what the change lets
		// someone do weighs less than the change (weightPurpose).
		if mayWords[w] && i >= 2 && ws[i-2] == "so" && pronouns[ws[i-1]] {
			if clauseEnd == nil {
				if clauseEnd = clauseEnds(text); len(clauseEnd) != len(ws) {
					clauseEnd = slices.Repeat([]int{len(ws)}, len(ws))
				}
			}
			purpose = clauseEnd[i]
			continue
		}
		// A name's words ("add 'look up flights' to my tasks") say what
		// it is called: no phrasal verb of theirs, nor their "make", is
		// asked for.
		if !named[w] {
			if p, j := phraseAt(ws, i, func(j int) bool { return !used[j] && !named[ws[j]] }); p != nil {
				for _, t := range p {
					// "Look up order 1234" gets the one it names:
					// no search.
					if one && len(p) > 1 && t == stem("search") {
						continue
					}
					addOwn(t, 1)
				}
				used[i], used[j] = true, true // its words say no more than it does
			} else if w == "make" {
				// "Make bob an admin", "make the board private": a
				// change to what one has, not a thing made.
				if !intoRead {
					into, intoRead = turnsInto(text), true
				}
				if into {
					// "make" itself stays a word, which a search_hint
					// in the user's words may say, but asks for what
					// an update is called rather than a create.
					addOwn(stem("make"), 1)
					turned = int32(len(own) - 1)
					used[i] = true
				}
			}
		}
		// A number on its own ("close bug 5512", "fixed in 2.4") is a
		// value, not a word a tool is named by: oauth2's 2 is no 2.4.
		if !used[i] && !stopWords[w] && isNumber(w) && !partOf[w] {
			values = append(values, w)
			continue
		}
		if !used[i] && !stopWords[w] {
			weight := 1.0
			// "New" says a thing is to be created, as the create group
			// it belongs to does; at full weight it would favour every
			// description that says "Creates a new ...".
			if named[w] || w == "new" {
				weight = weightNamed
			}
			if i < purpose {
				weight *= weightPurpose
			}
			t := stem(w)
			addOwn(t, weight)
			if q, ok := out[t]; ok && plural(w, t) {
				q.many = true
				out[t] = q
			}
			// "Remind me at 9 to ...": a reminder, made.
			if t == stem("remind") {
				addOwn(stem("create"), weightSynonym*weight)
			}
			// "Like status 5512", "define an audience": the request's
			// verb asks for what the API calls it.
			if more, ok := verbAlso[t]; ok && leads(ws, i) {
				addOwn(more, weightSynonym*weight)
			}
			if q, ok := out[t]; ok && q.own {
				switch {
				case sharesAccess(ws, i):
					also[q.group] = accessWords
				case pointsAt(ws, i):
					also[q.group] = pointWords
				}
			}
		}
	}
	if len(own) == 0 {
		// A number alone ("5512"): what else is there to search for?
		for _, v := range values {
			addOwn(v, 1)
		}
	}
	group := int32(len(own))
	ask := func(ts []string, g int32, w float64) {
		for _, t := range ts {
			if old, ok := out[t]; !ok {
				out[t] = qterm{w: w, group: g}
			} else if old.w < w {
				old.w = w // a term scores in one group
				out[t] = old
			}
		}
	}
	question := isQuestion(clean)
	for i, w := range ws {
		// "What is the pledge of this pool" asks about the one it
		// points at, not for a list ("which groups is this person in"
		// still asks for one).
		if one && (w == "what" || w == "which") && i+1 < len(ws) && (ws[i+1] == "is" || ws[i+1] == "was") {
			continue
		}
		// "Show me the runs", "give me a link": the one asking is
		// whom it is for, not what it is about.
		if w == "me" && i > 0 && (toldTo[ws[i-1]] || tellVerbs[ws[i-1]]) {
			continue
		}
		// "Which regions can I deploy to", "where do I find the key":
		// the one asking, of what can be done; "do I have", "what can
		// I access", "am I" ask about them.
		if w == "i" && i > 0 && (mayWords[ws[i-1]] || ws[i-1] == "do") && !aboutMine(ws[i+1:]) {
			continue
		}
		if qw := questionWords[w]; len(qw) > 0 {
			// What it asks for, in any of the words an API may use
			// ("who": users, members, collaborators).
			for _, t := range qw {
				ask(append([]string{t}, synonyms[t]...), group, weightSynonym)
			}
			group++
		}
		// "Is the service up?", "tell me when it goes down": asked of
		// its health check.
		if (w == "up" || w == "down") && !used[i] && (question || conditional(ws[:i])) {
			ask([]string{stem("health")}, group, 1)
			ask(synonyms[stem("health")], group, weightSynonym)
			group++
		}
		// "Which version is running?": asked of the server's own
		// information ("info" less, as many tools are some_info). The
		// version is what is asked about, so it comes first: "are any
		// runners running version 15" asks for runners.
		if w == "running" && question && slices.Contains(ws[:i], "version") {
			ask(stemAll([]string{"server", "system"}), group, 1)
			ask([]string{stem("info")}, group, weightSynonym)
			group++
		}
		// "What time zone is my account set to?": asked of a setting.
		if w == "set" && question && i+1 < len(ws) && ws[i+1] == "to" && !slices.ContainsFunc(ws[i+2:], func(w string) bool { return !stopWords[w] }) {
			ask(append([]string{stem("setting")}, synonyms[stem("setting")]...), group, weightSynonym)
			group++
		}
		// "who joined", "who attended": asked of those who took part.
		if w == "who" && i+1 < len(ws) && (stem(ws[i+1]) == "join" || stem(ws[i+1]) == "attend") {
			ask(stemAll([]string{"participant", "attendee"}), group, 1)
			group++
			continue
		}
		// "who changed", "who closed", "who in the console changed":
		// asked of a record of changes.
		if w == "who" && whoDid(ws[i+1:]) {
			ask(append([]string{stem("history")}, synonyms[stem("history")]...), group, weightSynonym)
			group++
		}
	}
	// "Email me when the disk is full": asked of an alert.
	if asksToBeTold(ws) {
		ask(append([]string{stem("alert")}, synonyms[stem("alert")]...), group, 1)
		ask([]string{stem("create")}, group+1, weightSynonym)
		group += 2
	} else if !question && onEachEvent(ws) {
		// "Ping our chat whenever someone pushes": asked of a webhook.
		ask(append([]string{stem("webhook")}, synonyms[stem("webhook")]...), group, 1)
		ask([]string{stem("create")}, group+1, weightSynonym)
		group += 2
	}
	for g, t := range own {
		if int32(g) == turned {
			ask(append([]string{stem("update")}, synonyms[stem("update")]...), turned, weightSynonym)
			continue
		}
		ask(synonyms[t], int32(g), weightSynonym*ownW[g])
		ask(also[int32(g)], int32(g), weightSynonym*ownW[g])
		if changesState[t] {
			ask([]string{stem("update")}, int32(g), weightUpdate*ownW[g])
		}
	}
	return out
}

// whoDid reports whether the words after a "who" tell of a deed: a verb
// in -ed comes first ("who changed it"), or right after a few words that
// say where ("who in the admin console changed it"). "Who has the
// shared drive" asks who has it.
func whoDid(after []string) bool {
	if len(after) == 0 {
		return false
	}
	if strings.HasSuffix(after[0], "ed") {
		return true
	}
	if !whereWords[after[0]] {
		return false
	}
	for i, w := range after[1:] {
		if i == 4 {
			return false
		}
		if past(w) && strings.HasSuffix(w, "ed") {
			return true
		}
		if beWords[w] || mayWords[w] || verbIntents[stem(w)] != intentNone {
			return false // the verb of "who": no deed
		}
	}
	return false
}

// sharesAccess reports whether ws[i] shares a thing with someone: "share
// the sheet with anna", "the sharing entry", "who is it shared with"
// ask of who may access it, while a "shared drive" is a kind of drive.
func sharesAccess(ws []string, i int) bool {
	switch ws[i] {
	case "share", "reshare", "unshare":
		return true
	case "sharing": // screen sharing and file sharing are features
		return i == 0 || ws[i-1] != "screen" && ws[i-1] != "file"
	case "shared": // files shared with me are listed
		return i+1 < len(ws) && ws[i+1] == "with" && (i+2 == len(ws) || ws[i+2] != "me")
	}
	return false
}

// pointsAt reports whether ws[i] points a thing at another: "point
// shop.example.com at deployment 9", "point the webhook to https://…";
// loyalty points and a data point do not.
func pointsAt(ws []string, i int) bool {
	if ws[i] != "point" && ws[i] != "repoint" {
		return false
	}
	return slices.ContainsFunc(ws[i+1:], func(w string) bool { return w == "at" || w == "to" })
}

// pointWords are what pointing a thing at another is called.
var pointWords = stemAll([]string{"assign", "update"})

// accessWords are the words an API uses for who may access a thing.
var accessWords = stemAll([]string{"permission", "access", "acl"})

// numbersInWords are the numbers text writes as part of a word, after
// its letters (oauth2, s3, ipv6) or before them (2fa, 4gb): words splits
// them off, but they name what the word names. A version ("v2.1") is a
// value, as a number on its own is.
func numbersInWords(text string) map[string]bool {
	var out map[string]bool
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsDigit(r) {
			i += size
			continue
		}
		j := i
		for j < len(text) {
			d, n := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsDigit(d) {
				break
			}
			j += n
		}
		after, _ := utf8.DecodeRuneInString(text[j:])
		at := i // where before starts
		before, n := utf8.DecodeLastRuneInString(text[:at])
		at -= n
		if before == '.' || before == '-' && !version(text[j:]) {
			// H.323, sha-256: a name's number, after a dot or a
			// hyphen ("release-2.3" is a version).
			before, n = utf8.DecodeLastRuneInString(text[:at])
			at -= n
		}
		attached := unicode.IsLetter(before) || unicode.IsLetter(after)
		if attached && !unicode.IsLetter(after) && (before == 'v' || before == 'V') {
			// "v2" alone is a version: its v follows no letter.
			b2, _ := utf8.DecodeLastRuneInString(text[:at])
			attached = unicode.IsLetter(b2)
		}
		if attached {
			if out == nil {
				out = map[string]bool{}
			}
			out[text[i:j]] = true // digits have no case
		}
		i = j
	}
	return out
}

// version reports whether what follows a number goes on as a version
// does: a dot and a digit (2.3, 1.9.2).
func version(after string) bool {
	if len(after) < 2 || after[0] != '.' {
		return false
	}
	r, _ := utf8.DecodeRuneInString(after[1:])
	return unicode.IsDigit(r)
}

// changesState are the verbs that change a thing's state, which an API
// often does by updating it (PATCH /flags/{key} turns a flag on).
var changesState = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range stemAll(strings.Fields("enable disable activate deactivate archive unarchive void rename lock unlock pause unpause suspend unsuspend resume mark close reopen promote demote toggle")) {
		m[w] = true
	}
	return m
}()

const weightUpdate = 0.5

// compound reports whether hyphen-joined pieces are one English word
// rather than a name: a prefix that is no word ("re-run", "e-mail",
// "multi-factor") or a phrasal verb ("sign-in", "dry-run"). A compound of
// words ("self-hosted", "read-only") counts as a name does: in an API
// where every runner is self-hosted, those words say little.
func compound(pieces []string) bool {
	if _, ok := phrases[pieces[0]+" "+pieces[1]]; ok {
		return true
	}
	return hyphenPrefixes[pieces[0]]
}

var hyphenPrefixes = map[string]bool{"re": true, "e": true, "un": true, "pre": true, "non": true, "co": true, "multi": true, "sub": true, "de": true, "anti": true, "semi": true, "inter": true}

// namedWords are the words of text found only inside names: joined by
// hyphens ("the new-checkout flag", "team vpn-users", "self-hosted"),
// less those of one English word (compound), or quoted ("put 'update
// changelog' on the checklist"). A name's words say less of what is
// asked than the query's own, and "new" there asks to create nothing.
func namedWords(text string) map[string]bool {
	quoted, rest := splitQuoted(text)
	if said, before, ok := whatIsSaid(rest); ok {
		quoted, rest = quoted+" "+said, before
	}
	if quoted == "" && !strings.Contains(text, "-") {
		return nil
	}
	inName, plain := map[string]bool{}, map[string]bool{}
	for _, w := range words(quoted) {
		inName[w] = true
	}
	for _, tok := range strings.FieldsFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
		into := plain
		if pieces := strings.Split(strings.ToLower(strings.Trim(tok, "-")), "-"); len(pieces) > 1 && !compound(pieces) {
			into = inName
		}
		for _, w := range words(tok) {
			into[w] = true
		}
	}
	for w := range plain {
		delete(inName, w)
	}
	return inName
}

// whatIsSaid parts an order that goes on after a colon into what it
// says there and the order: "leave a comment on PR 17: looks fine but
// add tests", "file a bug: login throws a 500". What follows the colon
// is the text of the thing, as a quote is, not what is asked for. The
// order must start with its verb and name something (two words other
// than stop words), so "Note: ...", "re: ..." or "GDPR request: erase
// ..." part nothing; nor does a colon followed by another order.
func whatIsSaid(text string) (said, order string, ok bool) {
	order, said, ok = strings.Cut(text, ": ")
	if !ok || strings.TrimSpace(said) == "" {
		return "", text, false
	}
	ws, n := words(order), 0
	for _, w := range ws {
		if !stopWords[w] {
			n++
		}
	}
	if n < 2 || leadingVerb(ws) == intentNone && makesLeading(order) < 0 {
		return "", text, false
	}
	// "Sign dave out everywhere: end all his sessions" says again what
	// to do; "looks fine" (no order's form) says what the comment does.
	if sw := words(said); leadingVerb(sw) != intentNone && !inflected(sw) {
		return "", text, false
	}
	return said, order + " ", true
}

// splitQuoted parts text into what is quoted ('...', "...", “...”,
// ‘...’) and the rest, each span ending in a space. An apostrophe
// ("it's", "the users' keys") opens and closes nothing: a single quote
// opens only after neither a letter nor a digit and closes only before
// one. A quote left open quotes nothing.
func splitQuoted(text string) (quoted, rest string) {
	var in, out strings.Builder
	closer := rune(0)
	open, from := 0, 0 // where the open quote stands, where its text starts
	prev := ' '
	for i, r := range text {
		next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
		switch {
		case closer == 0 && (r == '"' || r == '“' || (r == '\'' || r == '‘') && !isWordRune(prev)):
			closer = quoteCloser[r]
			open, from = i, i+utf8.RuneLen(r)
		case closer != 0 && r == closer && (r == '"' || r == '”' || !isWordRune(next)):
			in.WriteString(text[from:i])
			in.WriteByte(' ')
			out.WriteByte(' ')
			closer = 0
		case closer == 0:
			out.WriteRune(r)
		}
		prev = r
	}
	if closer != 0 {
		out.WriteString(text[open:])
	}
	return in.String(), out.String()
}

var quoteCloser = map[rune]rune{'"': '"', '“': '”', '\'': '\'', '‘': '’'}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// asksToBeTold reports whether a query asks to be told of something to
// come: "email me when", "notify us if", "let me know when", "tell me
// when it goes down"; but "tell me when the backup ran" or "tell me if
// the certificate is expired" asks to read what was.
func asksToBeTold(ws []string) bool {
	for i := 0; i+2 < len(ws); i++ {
		j := i + 1
		if ws[j] != "me" && ws[j] != "us" {
			continue
		}
		switch {
		case ws[i] == "let" && ws[j+1] == "know":
			j++
		case ws[i] == "tell" && j+1 < len(ws) && !slices.ContainsFunc(ws[j+1:min(len(ws), j+6)], past):
		case !tellVerbs[ws[i]]:
			continue
		}
		if j+1 < len(ws) && conditionWords[ws[j+1]] {
			return true
		}
	}
	return false
}

// onEachEvent reports whether a query asks for something to happen each
// time something else does: "whenever", "every time", "each time" or
// "any time" before what happens ("ping us whenever someone pushes").
// Not where the time is a thing or a time to come ("every time entry",
// "any time off", "any time next week"), in "at any time", nor in an
// order to read ("show me every time the deploy failed", "list the tests
// that fail every time"): what is read has happened already. "Get" is
// to receive here ("get a message whenever someone pushes").
func onEachEvent(ws []string) bool {
	first := slices.IndexFunc(ws, func(w string) bool { return !stopWords[w] })
	if first >= 0 && ws[first] != "get" && leadingVerb(ws) == intentRead {
		return false
	}
	for i, w := range ws {
		next := i + 1
		if w != "whenever" {
			if w != "every" && w != "each" && w != "any" || next == len(ws) || ws[next] != "time" || w == "any" && i > 0 && ws[i-1] == "at" {
				continue
			}
			next++
		}
		if next < len(ws) && !noEvent[ws[next]] {
			return true
		}
	}
	return false
}

// noEvent are the words after "every time" that make the time a thing
// ("time entry", "time off") or a time to come ("any time tomorrow")
// rather than start what happens.
var noEvent = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`entry entries off sheet sheets slot slots log logs zone zones tracking record records report
		reports window windows range ranges series stamp stamps period periods frame frames limit limits budget budgets estimate
		estimates spent today tomorrow tonight yesterday soon later now next before after between during until since within`) {
		m[w] = true
	}
	return m
}()

// past reports whether a word tells of what was: "ran", "failed".
func past(w string) bool {
	switch w {
	case "was", "were", "did", "ran", "went", "had", "got", "last":
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed")
}

// clauseEnds gives, for each of words(text), the index of the first word
// after its clause, which ends at a comma, semicolon, colon, full stop
// or mark followed by a space or the end ("we don't need it anymore,
// release it": the negator does not reach "release"), or at a
// full-width mark or an ellipsis, which need no space. Punctuation ends
// a word anyway, so the clauses' words are text's.
func clauseEnds(text string) []int {
	var ends []int
	for text != "" {
		clause := text
		for i, r := range text {
			size := utf8.RuneLen(r)
			if wideClauseMarks[r] {
				clause = text[:i+size]
				break
			}
			if strings.ContainsRune(",;:.!?", r) {
				next, _ := utf8.DecodeRuneInString(text[i+size:])
				if i+size == len(text) || unicode.IsSpace(next) {
					clause = text[:i+size]
					break
				}
			}
		}
		text = text[len(clause):]
		start := len(ends)
		for range words(clause) {
			ends = append(ends, 0)
		}
		for j := start; j < len(ends); j++ {
			ends[j] = len(ends)
		}
	}
	return ends
}

// wideClauseMarks end a clause with no space after them.
var wideClauseMarks = map[rune]bool{'…': true, '，': true, '、': true, '。': true, '；': true, '：': true, '！': true, '？': true}

// whereWords come before where a thing is, not what it is: "open a bug
// in the PAY project".
var whereWords = map[string]bool{"in": true, "on": true, "inside": true, "within": true, "under": true}

// negators deny the word that follows them ("don't" is read as "don").
var negators = map[string]bool{"don": true, "dont": true, "not": true, "never": true, "without": true, "doesn": true, "didn": true, "shouldn": true, "mustn": true}

// toldTo are the verbs whose "me" is whom an answer is for: "show me",
// "give me"; the tellVerbs too ("notify me").
var toldTo = map[string]bool{"show": true, "give": true, "tell": true, "get": true, "find": true, "send": true, "fetch": true, "list": true, "let": true, "help": true, "bring": true}

// mayWords ask what may be done: "can I", "should I".
var mayWords = map[string]bool{"can": true, "could": true, "should": true, "may": true, "might": true, "must": true}

// aboutMine reports whether the words after "can I" or "do I" ask about
// what the caller has or may reach: "do I have", "can I still access".
func aboutMine(after []string) bool {
	for _, w := range after[:min(2, len(after))] {
		if mineWords[w] {
			return true
		}
	}
	return false
}

var mineWords = map[string]bool{"have": true, "own": true, "owe": true, "belong": true, "follow": true, "access": true, "see": true,
	"view": true, "manage": true, "edit": true, "use": true, "join": true, "read": true}

// tellVerbs tell someone of something to come: "email me when", "ping us
// if".
var tellVerbs = map[string]bool{"email": true, "mail": true, "notify": true, "alert": true, "ping": true, "warn": true, "text": true, "page": true, "message": true, "remind": true, "slack": true}

// conditionWords start a condition: "when it goes down", "if the site is
// up".
var conditionWords = map[string]bool{"when": true, "if": true, "whenever": true, "once": true}

// conditional reports whether the words before a word make it a
// condition.
func conditional(before []string) bool {
	return slices.ContainsFunc(before[max(0, len(before)-3):], func(w string) bool { return conditionWords[w] })
}

// withoutValues drops the identifiers a query quotes ("the balance of
// addr1qx2fxv2u…", "commit 3f4add9e2c1b", a UUID): a run of letters and
// digits, joined by - or _ or not, of eight or more of them that changes
// between letter and digit three times or more, or a shorter one that
// changes four times or more ("override 7f3k2"), is a value, whose pieces
// are no words (scored, they would count as words no tool uses and crowd
// the query's own out of its maxQueryTerms). What is kept of one is
// the type prefix many identifiers carry (addr1…, pool1…): three or more
// letters before its first digit. A tracker's key (issueKey) reads as
// "issue" after a verb, a stop word or nothing ("move DEV-52 to Done"
// moves an issue), and is dropped after a noun, which says what it keys
// ("product SKU-22"); a standard's name (SHA-256) stays. A span of time
// ("120h45min") is no value: it stays whole, for withoutDurations.
func withoutValues(query string) string { return valuesAs(query, "") }

// valuesAs is withoutValues with each value it drops, but for the
// prefix it keeps, written as word: queryIntent reads "3fa85f64-… is
// stuck, restart it" as "id is stuck, restart it", a statement and an
// order, where with nothing left it would start as a question.
func valuesAs(query, word string) string {
	return replaceRuns(withoutAddresses(query), func(b *strings.Builder, run string) {
		n, changes, letters, prefixEnd := 0, 0, 0, -1
		var prev rune = -1
		for i, r := range run {
			if r == '-' || r == '_' {
				if prefixEnd < 0 {
					prefixEnd = i
				}
				continue
			}
			n++
			digit := unicode.IsDigit(r)
			if digit && prefixEnd < 0 {
				prefixEnd = i
			}
			if !digit && prefixEnd < 0 {
				letters++
			}
			if prev >= 0 && digit != unicode.IsDigit(prev) {
				changes++
			}
			prev = r
		}
		if issueKey(run) {
			letters, _, _ := strings.Cut(run, "-")
			if w := lastWord(b.String()); standards[letters] {
				b.WriteString(run) // SHA-256 is a name's
			} else if w == "" || stopWords[w] || verbIntents[stem(w)] != intentNone {
				// "move DEV-52 to Done", "the title of WEB-88": an
				// issue; "product SKU-22" says what it keys.
				b.WriteString("issue")
			}
			return
		}
		if n < 8 && changes < 4 || changes < 3 || duration.MatchString(run) {
			b.WriteString(run)
			return
		}
		if letters >= 3 {
			b.WriteString(run[:prefixEnd])
		} else {
			b.WriteString(word)
		}
	})
}

// withoutDurations puts "time" for each span of time a query writes as
// one run ("log 2h30m of work", "45min", "1h"): it asks about time, as
// "hours" does. It is read after aboutOne, as a span points at no one
// thing ("deploys in the past 24h" wants no tool of one deploy). After
// "every", "each" or "any" a span says how often ("back up the db every
// 6h and keep 7"), which as "every time" would ask to be called each
// time something happens (onEachEvent): it stays.
func withoutDurations(query string) string {
	return replaceRuns(query, func(b *strings.Builder, run string) {
		if duration.MatchString(run) && !eachWords[lastWord(b.String())] {
			b.WriteString("time")
		} else {
			b.WriteString(run)
		}
	})
}

// eachWords say "every time" with "time" after them (onEachEvent).
var eachWords = map[string]bool{"every": true, "each": true, "any": true}

// lastWord is the last run of letters of s, lower case, past what
// follows it.
func lastWord(s string) string {
	end := strings.LastIndexFunc(s, unicode.IsLetter)
	if end < 0 {
		return ""
	}
	_, size := utf8.DecodeRuneInString(s[end:])
	s = s[:end+size]
	start := strings.LastIndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if start >= 0 {
		_, size := utf8.DecodeRuneInString(s[start:])
		start += size
	} else {
		start = 0
	}
	return strings.ToLower(s[start:])
}

// replaceRuns is query with each run of letters and digits, joined by -
// or _ between them ("OPS-1423", "cus_9a8b"), replaced by what value
// writes of it to b.
func replaceRuns(query string, value func(b *strings.Builder, run string)) string {
	var b strings.Builder
	start := -1
	flush := func(end int) {
		run := query[start:end]
		start = -1
		value(&b, run)
	}
	for i, r := range query {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		// - and _ join a run only between letters and digits.
		joiner := (r == '-' || r == '_') && start >= 0 && i+1 < len(query) && isAlnumAt(query, i+1)
		switch {
		case (alnum || joiner) && start < 0:
			start = i
		case !alnum && !joiner && start >= 0:
			flush(i)
		}
		if !alnum && !joiner {
			b.WriteRune(r)
		}
	}
	if start >= 0 {
		flush(len(query))
	}
	return b.String()
}

// duration matches a span of time written as one run ("2h30m", "45min",
// "1h"): withoutDurations.
var duration = regexp.MustCompile(`^[0-9]+(?:h|hrs?)(?:[0-9]+(?:m|mins?))?$|^[0-9]+mins?$`)

// standards are the letters of names that look like a tracker's key
// (issueKey) but name a standard: SHA-256, UTF-8, RFC-3339, CIP-25.
var standards = map[string]bool{"AES": true, "SHA": true, "UTF": true, "ISO": true, "RFC": true, "CIP": true, "EIP": true, "BIP": true,
	"PEP": true, "TLS": true, "SSL": true, "HTTP": true, "CVE": true, "MD": true, "GPT": true, "IPV": true, "ECMA": true, "IEEE": true, "UCS": true}

// issueKey reports whether a run is a tracker's key: two to ten capital
// letters, a hyphen and a number ("OPS-1423", "INC-77"): it names an
// issue, and its letters a project, not anything asked for ("BILL-230"
// is no invoice).
func issueKey(run string) bool {
	letters, digits, ok := strings.Cut(run, "-")
	if !ok || len(letters) < 2 || len(letters) > 10 || digits == "" || len(digits) > 9 {
		return false
	}
	for _, r := range letters {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// withoutAddresses puts "user" for each e-mail address a query quotes
// ("invite jane@example.com"): it names a person, and its pieces are no
// words. An address is a run of the characters addresses are made of
// (letters and digits of any script, as RFC 6531 allows: "müller@firma.de"
// is one run, not "mü" and an address) with one @, something before it
// and a dot inside what follows, whose last label is a word rather than a
// number (hasLetter); the word is shorter than any address. The letters
// and digits are those withoutValues reads, so that dropping a value from
// inside an address cannot leave a new address behind.
func withoutAddresses(query string) string {
	if !strings.Contains(query, "@") {
		return query
	}
	inAddress := func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._%+-@", r)
	}
	var b strings.Builder
	for len(query) > 0 {
		i := strings.IndexFunc(query, inAddress)
		if i < 0 {
			i = len(query)
		}
		b.WriteString(query[:i])
		query = query[i:]
		n := strings.IndexFunc(query, func(r rune) bool { return !inAddress(r) })
		if n < 0 {
			n = len(query)
		}
		run := query[:n]
		query = query[n:]
		local, host, ok := strings.Cut(run, "@")
		trimmed := strings.TrimRight(host, ".-")
		if !ok || local == "" || strings.Contains(host, "@") || trimmed == "" || trimmed[0] == '.' || !strings.Contains(trimmed, ".") || !hasLetter(trimmed[strings.LastIndexByte(trimmed, '.')+1:]) {
			b.WriteString(run)
			continue
		}
		b.WriteString("user")
		b.WriteString(host[len(trimmed):])
	}
	return b.String()
}

// withoutPhones puts "phone number" for each phone number a query gives
// (+1 415 555 0199, +44 20 7946 0958, (312) 555-0142, 312-555-0142):
// it asks about the number ("release +1 415 555 0199", "which profile
// is +1 305 555 0123 on?"), and its digits are values no tool is
// searched by. A number something is sent or put through to ("text a
// code to +15551234567", "ring +1 415 555 0100") is where, not what: the
// request is about the message or the call, and the number stays. A
// phone number has 10 to 15 digits; fewer are an amount or a date
// (+100000000, +2024-03-15), and a piece of a longer run of numbers
// (123-456-7890-1234, 12.345.678,00) is none.
func withoutPhones(query string) string {
	if !strings.ContainsAny(query, "+(-.") {
		return query
	}
	var b strings.Builder
	last := 0
	for _, m := range phoneNumber.FindAllStringIndex(query, -1) {
		// Past the space or mark before it: a number starts at its +, a
		// digit or the bracket of its area code.
		for m[0] < m[1] {
			c := query[m[0]]
			if c == '+' || isDigit(c) || c == '(' && m[0]+1 < m[1] && isDigit(query[m[0]+1]) {
				break
			}
			_, size := utf8.DecodeRuneInString(query[m[0]:])
			m[0] += size
		}
		digits := 0
		for i := m[0]; i < m[1]; i++ {
			if isDigit(query[i]) {
				digits++
			}
		}
		more := m[1]+1 < len(query) && strings.IndexByte("-.,", query[m[1]]) >= 0 && isDigit(query[m[1]+1])
		if digits < 10 || digits > 15 || more || reachedAt[lastWord(query[:m[0]])] {
			continue
		}
		b.WriteString(query[last:m[0]])
		b.WriteString("phone number")
		last = m[1]
	}
	if last == 0 {
		return query
	}
	b.WriteString(query[last:])
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// phoneNumber matches a phone number in international form (a country
// code, then groups of two to four digits) or in the North American
// one, after a start, a space, a comma or an opening mark.
var phoneNumber = regexp.MustCompile(`(?:^|[\s\p{Zs},;:'"(\[])(?:\+\d{1,3}(?:[ .-]?\(?\d{2,4}\)?){1,5}|\(\d{3}\) ?\d{3}[ .-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})\b`)

// reachedAt are the words before a number that say something goes to it
// or comes from it: a message, a call, a fax.
var reachedAt = map[string]bool{"to": true, "from": true, "at": true, "text": true, "sms": true, "call": true, "ring": true, "dial": true, "fax": true, "message": true, "page": true, "cc": true}

// withoutIPs puts, for each IPv4 address a query gives, what it is: "ip"
// for an address (78.46.10.20), "subnet" for a block in CIDR notation
// (10.0.2.0/24). Its numbers are values, searched for by no tool.
func withoutIPs(query string) string {
	if strings.Count(query, ".") < 3 {
		return query
	}
	var b strings.Builder
	last := 0
	for _, m := range ipv4.FindAllStringIndex(query, -1) {
		before, after := query[:m[0]], query[m[1]:]
		// Four numbers of a longer dotted run (1.2.3.4.5) or of a URL's
		// host are none; a version (v1.2.3.4) has no word boundary
		// before its number, so the pattern finds none in it.
		if strings.HasSuffix(before, ".") || len(after) > 1 && after[0] == '.' && isDigit(after[1]) || strings.HasSuffix(before, "://") {
			continue
		}
		b.WriteString(query[last:m[0]])
		if strings.Contains(query[m[0]:m[1]], "/") {
			b.WriteString("subnet")
		} else {
			b.WriteString("ip")
		}
		last = m[1]
	}
	b.WriteString(query[last:])
	return b.String()
}

var ipv4 = regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(?:/(?:3[0-2]|[12]?[0-9]))?\b`)

// withoutChannels puts "channel" for each channel a query names the way
// chat tools write them ("post it in #releases", "add Mei to
// #design-review"), and reports whether there was one: such a query
// points at one channel (aboutOne). A channel is a # at the start of a
// word, followed by a name that starts with a letter; the name is no word
// of the request. A hash before digits stays a number, "C#" a language,
// and a colour (#ff0000, #a1b2c3) or a line's anchor (#L42) what it is.
func withoutChannels(query string) (string, bool) {
	if !strings.Contains(query, "#") {
		return query, false
	}
	found := false
	out := replaceRuns(query, func(b *strings.Builder, run string) {
		before := b.String()
		r, size := utf8.DecodeRuneInString(run)
		p := ' '
		if len(before) > 1 {
			p, _ = utf8.DecodeLastRuneInString(before[:len(before)-1])
		}
		if !strings.HasSuffix(before, "#") || !unicode.IsLetter(r) || !unicode.IsSpace(p) && !strings.ContainsRune("([{\"'`,;:", p) ||
			colour(run) || isNumber(run[size:]) {
			b.WriteString(run)
			return
		}
		b.WriteString("channel")
		found = true
	})
	return out, found
}

// colour reports whether run, after a #, is a colour's hex code: six or
// eight hex digits, or three or four of which one is a digit (#f00).
func colour(run string) bool {
	digit := false
	for _, c := range run {
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	n := len(run)
	return n == 6 || n == 8 || (n == 3 || n == 4) && digit
}

// withoutHostnames puts "domain" for each host name a query quotes on its
// own ("the DNS records of example.org", "a certificate for
// shop.example.com"): it names a domain, and its labels are no words. A
// host name is two or more labels of ASCII letters, digits and inner
// hyphens, joined by dots, whose last is a top-level domain people write
// (hostTLDs: not "json" or "yaml", so that spec.yaml stays a file), and
// which is no part of a URL, an address or a path.
func withoutHostnames(query string) string {
	if !strings.Contains(query, ".") {
		return query
	}
	inHost := func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.'
	}
	var b strings.Builder
	for i := 0; i < len(query); {
		if !inHost(query[i]) || i > 0 && (inHost(query[i-1]) || query[i-1] >= utf8.RuneSelf) {
			b.WriteByte(query[i])
			i++
			continue
		}
		j := i
		for j < len(query) && inHost(query[j]) {
			j++
		}
		run := strings.TrimRight(query[i:j], ".")
		if run == "" { // dots only: no host name, and no progress to make
			b.WriteString(query[i:j])
			i = j
			continue
		}
		end := i + len(run)
		before := byte(' ')
		if i > 0 {
			before = query[i-1]
		}
		after := byte(' ')
		if end < len(query) {
			after = query[end]
		}
		if isHostname(run) && !strings.ContainsRune("/@:", rune(before)) && !strings.ContainsRune("/@:", rune(after)) && (end == len(query) || query[end] < utf8.RuneSelf) {
			b.WriteString("domain")
		} else {
			b.WriteString(run)
		}
		i = end
	}
	return b.String()
}

// withoutFilenames puts "file" for each file name a query quotes, with
// its folders, from the root or home or not ("what's in config/app.yaml",
// "/var/log/app.log", "the README.md"): it names a
// file, and its words are no words of the request ("app" asks for no
// app). A file name ends in an extension people keep text, code, data
// or documents in (fileName); not ".js", which names frameworks as often
// (node.js, next.js).
func withoutFilenames(query string) string {
	if !strings.Contains(query, ".") {
		return query
	}
	return fileName.ReplaceAllString(query, "${1}file")
}

// fileName matches a file name and its folders, after a start, a space,
// a comma or an opening mark or quote; a URL's or an address's piece is
// none. Its extension is in lower or upper case (README.md, SCAN.PDF), not
// capitalised as a sentence's first word is where a space was left out
// ("Do it.Go", "fails at step 3.Log in"), as isHostname reads.
var fileName = func() *regexp.Regexp {
	ext := `ya?ml|json|toml|ini|conf|cfg|md|txt|rst|csv|tsv|xml|html?|css|ts|tsx|go|py|rb|rs|java|kt|cs|cpp|php|sh|sql|lock|log|pdf|docx?|xlsx?|pptx?|png|jpe?g|gif|svg|zip|tar|gz|tgz`
	return regexp.MustCompile(`(^|[\s("'\x60,;\[])(?:(?:~|\.\.?)?/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:` + ext + `|` + strings.ToUpper(ext) + `)\b`)
}()

// isHostname reports whether s is a host name withoutHostnames reads:
// written in lower case, as people write host names, so that ASP.NET,
// Dockerfile.dev and "the flag.It" are not.
func isHostname(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 || !hostTLDs[labels[len(labels)-1]] || strings.ToLower(s) != s {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	return true
}

// hostTLDs are the top-level domains of the host names people write in a
// request, less those that are also common file extensions or field
// names (sh, py, md, pl, zip, mov, in, info).
var hostTLDs = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(`com org net io dev app co ai cloud site online tech biz xyz me us uk de fr eu ca au jp nl es it
		se ch at be dk no fi br mx nz ie sg hk kr cn ru za edu gov example test local internal localhost corp lan`) {
		m[t] = true
	}
	return m
}()

// hasLetter reports whether s holds a letter. A top-level domain does
// (RFC 3696, section 2), a version does not: lodash@4.17.21 is a
// package, not an address.
func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// isAlnumAt reports whether the rune at byte offset i of s is a letter or
// a digit.
func isAlnumAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// contracted spells out "what's", in any of its casings and apostrophes,
// which words would cut to "what" (a lone letter is dropped), so that it
// reads as "what is".
var contracted = func() *strings.Replacer {
	var pairs []string
	for _, what := range []string{"what", "What", "WHAT"} {
		for _, apos := range []string{"'", "’"} {
			pairs = append(pairs, what+apos+"s", what+" is", what+apos+"S", what+" is")
		}
	}
	return strings.NewReplacer(pairs...)
}()

// makesInto matches "make" that turns one thing into another: "make
// bob an admin", "make someone a super admin", "make the board
// private", "make Zoë an admin"; not "make a board" or "make a copy of
// it". Its groups are the thing turned, the word after it if any, and
// the word after "a" or "an" if any.
var makesInto = regexp.MustCompile(`(?i)\bmake\s+(?:(?:the|my|our|his|her|their|this|that)\s+)?([\pL\pN_@.-]+)(?:\s+([\pL\pN_@.-]+))?\s+(?:an?\s+([\pL\pN_]+)|the\s+(?:owner|admin|default|primary|lead)\b|(?:private|public|default|primary|visible|hidden|read-only|readonly|active|inactive)\b)`)

// turnsInto reports whether text's "make" turns one thing into another
// (makesInto) rather than making one: "make a new private repo", "make
// me a new API key" (made for someone), "make two private boards" (a
// count, not a thing to turn), "make backups of a database" (a thing
// made of another).
func turnsInto(text string) bool {
	m := makesInto.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	obj, after, made := strings.ToLower(m[1]), strings.ToLower(m[2]), strings.ToLower(m[3])
	switch {
	case obj == "a" || obj == "an" || obj == "some" || obj == "sure" || newWords[obj] || newWords[made]:
		return false
	case after == "" && (isNumber(obj) || countWords[obj]):
		return false
	}
	return !prepositions[after]
}

// prepositions start what a thing is made of or for: "make backups of
// a database", "make room for a new hire".
var prepositions = map[string]bool{"of": true, "for": true, "from": true, "with": true, "in": true, "on": true, "to": true, "into": true, "at": true, "by": true}

// countWords count the things a query asks for: "make two private
// boards".
var countWords = map[string]bool{"two": true, "three": true, "four": true, "five": true, "six": true, "seven": true, "eight": true,
	"nine": true, "ten": true, "several": true, "multiple": true, "many": true, "few": true, "couple": true}

// todo finds "to-do" and "to-dos", in any casing, where they are words
// of their own, to be read as one word rather than two stop words:
// "door-to-door" and "auto-download" keep theirs.
var todo = regexp.MustCompile(`(?i)\bto-do(s?)\b`)

// qterm is one term of a query: its weight and the query word it stands
// for (its group).
type qterm struct {
	w     float64
	group int32
	own   bool // one of the query's own words (or what its phrasal verb stands for), not a synonym or a reading of it
	many  bool // a plural of the query's own ("what projects"), which asks for their collection
	where bool // a word of where the thing asked about is ("in the PAY project"), after in, on, inside, within or under
	// onlyReached scores the term only for a tool that a term of an
	// earlier group reached; its group must sort last.
	onlyReached bool
}

// terms splits text into lower-case stemmed words: camelCase, snake_case
// and letters-then-digits names come apart, punctuation and control
// characters separate, stop words and single letters are dropped.
func terms(text string) []string { return termsOf(words(text)) }

// termsOf is terms of text's words.
func termsOf(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !stopWords[w] || indexedStopWords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// words splits text into lower-case words, stop words included (phrases
// need them), single letters and words over 64 bytes left out.
func words(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if len(w) > 64 || utf8.RuneCountInString(w) == 1 && !unicode.IsDigit(rune(w[0])) && w != "i" {
			return
		}
		out = append(out, w)
	}
	var prev rune
	skip := -1 // where an acronym's plural s is, left out of its word
	for i, r := range text {
		if i == skip {
			prev = r
			continue
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			// A lower-to-upper edge starts a word (listJobs), as does
			// the last capital of a run before a lower-case letter
			// (HTTPServer: HTTP, Server), and a digit after a letter
			// (oauth2: oauth, 2).
			if len(word) > 0 {
				if unicode.IsUpper(r) {
					next, size := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
					// ...but an acronym's plural is the acronym (getIPs:
					// get, IP; listAPIs: list, API).
					plural := false
					if next == 's' && unicode.IsUpper(prev) {
						after, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r)+size:])
						if plural = !unicode.IsLower(after); plural {
							skip = i + utf8.RuneLen(r)
						}
					}
					if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && unicode.IsLower(next) && !plural {
						flush()
					}
				} else if unicode.IsDigit(r) && unicode.IsLetter(prev) {
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
// "run" meet, "cancelled", "canceled" and "cancel" do, and "created",
// "creates" and "create" do (a final "e" is dropped, as the suffixes drop
// it). It is deliberately light: a wrong merge costs more than a missed
// one, so a suffix stays when what is left has no vowel ("string").
func stem(w string) string {
	w = stemInflection(w)
	if us, ok := spellings[w]; ok {
		return us
	}
	return w
}

// stemInflection is stem without the spelling a word is brought to.
func stemInflection(w string) string {
	if one, ok := shortPlurals[w]; ok {
		return one
	}
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "xes")):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") &&
		!strings.HasSuffix(w, "ias") && !strings.HasSuffix(w, "vas"): // alias and canvas meet aliases and canvases
		w = w[:n-1]
	}
	if keepWhole[w] {
		return w
	}
	n = len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ing") && hasVowel(w[:n-3]):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed") && hasVowel(w[:n-2]):
		w = undouble(w[:n-2])
	}
	if n = len(w); n > 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// undouble turns "cancell" into "cancel" and "stopp" into "stop".
func undouble(w string) string {
	if n := len(w); n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiousl", rune(w[n-1])) || n > 4 && strings.HasSuffix(w, "ll") {
		return w[:n-1]
	}
	return w
}

var stopWords = map[string]bool{}

// indexedStopWords are stop words in a query that still mean something
// in a tool's name or path: /users/me is the caller's own user. A query
// reaches them through questionWords ("my", "I").
var indexedStopWords = map[string]bool{"me": true}

// shortPlurals are plurals that stem's rule misses: of abbreviations too
// short ("PRs", "IPs"), and of words whose plural ends like a Latin
// singular ("APIs", "menus", "SKUs"); "cookies" is no cooky.
var shortPlurals = map[string]string{"apis": "api", "uris": "uri", "kpis": "kpi", "wikis": "wiki", "emojis": "emoji",
	"menus": "menu", "skus": "sku", "cpus": "cpu", "vcpus": "vcpu", "gpus": "gpu", "cookies": "cooki", "prs": "pr", "ips": "ip", "ids": "id", "vms": "vm", "mrs": "mr", "uis": "ui",
	"stats": "statistic"}

// spellings bring a British spelling's stem to the American one, which
// API documents mostly use: "colour" meets "color", "organise" and
// "organisation" meet "organize" and "organization". It also meets
// the forms whose double l the inflection rule takes for a doubled
// consonant: "installed" and "install".
var spellings = func() map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Fields(`colour:color favourite:favorite favour:favor behaviour:behavior honour:honor labour:labor
		neighbour:neighbor flavour:flavor rumour:rumor centre:center licence:license catalogue:catalog dialogue:dialog
		programme:program grey:gray analyse:analyze defence:defense offence:offense
		organise:organize organisation:organization authorise:authorize authorisation:authorization customise:customize
		customisation:customization synchronise:synchronize synchronisation:synchronization normalise:normalize
		recognise:recognize prioritise:prioritize categorise:categorize finalise:finalize initialise:initialize
		serialise:serialize summarise:summarize visualise:visualize utilise:utilize utilisation:utilization
		minimise:minimize maximise:maximize optimise:optimize optimisation:optimization personalise:personalize
		localise:localize localisation:localization anonymise:anonymize tokenise:tokenize capitalise:capitalize
		apologise:apologize realise:realize memorise:memorize itemise:itemize standardise:standardize
		enrol:enroll enrolment:enrollment fulfil:fulfill fulfilment:fulfillment instalment:installment
		installed:install uninstalled:uninstall`) {
		gb, us, _ := strings.Cut(pair, ":")
		out[stemInflection(gb)] = stemInflection(us)
	}
	return out
}()

// keepWhole are words whose suffix is not an inflection.
var keepWhole = map[string]bool{"setting": true, "during": true, "nothing": true, "something": true, "anything": true, "everything": true, "morning": true, "evening": true}

// synonyms maps a stemmed word to words an API may use for the same
// thing. Groups are symmetric; a few words also ask for one that does not
// ask for them (a subscription is to a plan; see init).
var synonyms = map[string][]string{}

// phrases maps two words of a query to the word an API uses for what
// they say together.
var phrases = map[string][]string{}

// phrasesByStem are the phrases by their first word's stem: "tak out" for
// "taking out".
var phrasesByStem = map[string][]string{}

// phrasesApart are the phrases that say something else when a word
// parts theirs, by their first word's stem: "kick bob off".
var phrasesApart = map[string][]string{stem("kick") + " off": stemAll([]string{"remove"})}

// phrasesTogether are the phrases that say it only with no word between
// their two, by their first word's stem as phrasesApart: "ping me" asks
// to be told, "ping the host for me" for a health check; "power cycle"
// resets, "power use per billing cycle" does not; "active directory" is
// LDAP, "active users in the directory" are not. Each is a phrase of
// phrases (TestPhrasesTogetherArePhrases).
var phrasesTogether = map[string]bool{}

// togetherPhrases are phrasesTogether as written.
var togetherPhrases = []string{"ping me", "power cycle", "power cycling", "active directory", "restore point", "restore points", "chat room", "group chat"}

// verbAlso are verbs that ask for another word only as the request's
// own verb: "like status 5512" and "what have I liked?" ask for a
// favorite, "define an audience" for a create; "something like acme",
// "I would like to follow bob" and "the variables we defined" do not.
var verbAlso = map[string]string{stem("like"): stem("favorite"), stem("define"): stem("create"), stem("link"): stem("connect"), stem("report"): stem("flag")}

// leads reports whether ws[i] is the first word other than a stop word,
// and no "would" comes before it.
func leads(ws []string, i int) bool {
	return !slices.ContainsFunc(ws[:i], func(w string) bool { return !stopWords[w] || w == "would" })
}

// questionWords maps a question word to what it asks for: "who" asks for
// users, "which" for a list, "how many" for a count.
var questionWords = map[string][]string{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by for from how i in into is it its me my of on or our please that the their them then this to us was we what when where which who whose why will with you your any
		do does did have has had can could should would there here so some just also about been being were than too very up out off over own one actually really now yet still already anymore currently ever maybe perhaps basically need want able sure thing things stuff lately`) {
		stopWords[w] = true
	}
	for _, w := range strings.Fields("who whom whose what which how when where why is are was were has have had does do did can could") {
		questionStarts[w] = true
	}
	for phrase, ws := range map[string]string{
		"sign in": "login", "log in": "login", "sign on": "login", "logged in": "login",
		"sign out": "logout", "log out": "logout", "logged out": "logout",
		"sign up": "register", "turn off": "disable", "switch off": "disable", "shut down": "disable shutdown",
		"turn on": "enable", "switch on": "enable", "kick off": "trigger", "set up": "create",
		"take away": "remove", "take out": "remove", "take off": "remove", "kick out": "remove", "look up": "get search",
		"bring back": "restore", "put back": "restore", "put on": "add", "put in": "add", "roll back": "rollback", "run again": "retry", "try again": "retry", "dry run": "test", "loop in": "add follower", "get rid": "delete remove", "get back": "restore", "hand over": "assign transfer", "spin up": "create start", "pull up": "get", "wake up": "start resume", "how many": "count", "how long": "duration", "power cycle": "reset restart", "power cycling": "reset restart", "ping me": "notification notify subscribe", "watch for": "subscribe subscription", "back up": "backup snapshot", "restore point": "snapshot", "restore points": "snapshot", "active directory": "ldap", "hook up": "connect connection add", "call off": "cancel", "send again": "resend notify", "money back": "refund", "on hand": "stock quantity", "left off": "resume", "send later": "send schedule", "post later": "post schedule", "publish later": "publish schedule", "pull request": "pull", "text message": "sms", "single sign": "sso", "one go": "batch", "at once": "batch", "fire off": "send", "swap out": "replace", "pay out": "payout", "pull into": "add", "get out": "leave", "throw on": "add", "throw onto": "add", "throw in": "add", "stop following": "unfollow", "tear down": "delete destroy", "break down": "breakdown", "broken down": "breakdown", "split by": "breakdown", "thumbs up": "reaction react rate rating like", "top up": "add fund balance", "chat room": "channel", "group chat": "channel", "stop notifying": "mute", "fire up": "start", "as resolved": "close", "over time": "trend timeseries history",
	} {
		phrases[phrase] = stemAll(strings.Fields(ws))
		first, second, _ := strings.Cut(phrase, " ")
		phrasesByStem[stem(first)+" "+second] = phrases[phrase]
	}
	for _, phrase := range togetherPhrases {
		first, second, _ := strings.Cut(phrase, " ")
		phrasesTogether[stem(first)+" "+second] = true
	}
	for kind, verbs := range map[intent]string{
		intentRead: `get fetch read retrieve show view describe inspect lookup look list enumerate browse find search query
			count download export display print tell compare watch monitor`,
		intentWrite: `create add new make register open update edit modify change patch set replace rename delete remove
			destroy drop erase purge cancel void end abort stop kill terminate halt restart retry rerun resume replay enable activate
			unpause disable deactivate suspend pause hold freeze restore reactivate unsuspend undelete recover trigger
			dispatch start launch invoke execute run approve accept confirm reject deny decline assign give grant revoke
			allow block ban unban rotate regenerate renew reset lock unlock move shift drag relocate transfer archive unarchive mark close reopen
			revert undo merge upload import publish unpublish promote sort reorder invite send post reply submit sign log turn switch shut
			kick take bring put star unstar follow unfollow mute unmute silence snooze link unlink attach detach subscribe
			unsubscribe enroll unenroll generate sync deploy rollback clear flush expire onboard offboard pin unpin label tag
			install uninstall configure schedule unschedule dismiss resolve acknowledge leave save upsert bill buy purchase
			upgrade downgrade fire swap enrol bump wipe insert remind play disconnect screen`,
	} {
		for _, v := range strings.Fields(verbs) {
			verbIntents[stem(v)] = kind
		}
	}
	for w, asks := range map[string]string{
		"where": "location region", "who": "user member", "whom": "user member", "which": "list", "what": "list", "my": "me", "mine": "me", "myself": "me", "me": "me", "i": "me",
	} {
		questionWords[w] = stemAll(strings.Fields(asks))
	}
	for _, group := range [][]string{
		{"delete", "remove", "destroy", "drop", "erase", "purge", "clear", "wipe"},
		{"list", "enumerate", "all", "every", "browse"},
		{"get", "fetch", "read", "retrieve", "show", "view", "describe", "inspect", "detail", "lookup"},
		{"create", "add", "new", "make", "register", "open", "upsert", "insert"},
		{"update", "edit", "modify", "change", "patch", "set", "replace", "rename", "upsert", "upgrade", "downgrade", "bump"},
		{"cancel", "abort", "stop", "kill", "terminate", "halt", "void"},
		{"restart", "retry", "rerun", "resume", "replay"},
		{"enable", "activate", "unpause"},
		{"disable", "deactivate", "inactivate"},
		{"suspend", "pause", "hold", "freeze"},
		{"restore", "reactivate", "unsuspend", "undelete", "recover"},
		{"trigger", "dispatch", "start", "launch", "invoke", "execute"},
		{"search", "find", "query", "filter", "match"},
		{"count", "number", "total", "many"},
		{"user", "member", "person", "people", "account", "employee", "colleague", "staff", "someone", "somebody", "everyone", "collaborator", "hire", "newcomer"},
		{"me", "authenticated", "current", "self"},
		{"admin", "administrator", "superuser"},
		{"org", "organization", "organisation", "tenant", "company", "workspace"},
		{"repo", "repository", "project"},
		{"log", "history", "audit"},
		{"history", "activity", "audit", "timeline", "revision", "event"},
		{"alert", "alarm", "incident", "notification"},
		{"silence", "mute", "snooze", "suppress"},
		{"secret", "credential", "password", "token", "key"},
		{"error", "failure", "fail", "crash", "problem"},
		{"issue", "ticket", "bug"},
		{"pr", "pull"},
		{"mr", "merge"},
		{"job", "task", "run", "execution", "workflow", "operation"},
		{"workflow", "pipeline", "automation", "flow", "ci", "build"},
		{"step", "operation", "action"},
		{"webhook", "hook", "callback"},
		{"type", "kind", "category"},
		{"tls", "ssl", "https"},
		{"task", "todo"},
		{"snippet", "gist"},
		{"child", "children", "subtask", "subitem"},
		{"tag", "label", "keyword"},
		{"related", "similar"},
		{"thread", "conversation"},
		{"copy", "duplicate", "clone", "replicate"},
		{"brief", "overview", "summary"},
		{"goal", "objective", "okr"},
		{"option", "choice"},
		{"enum", "dropdown"},
		{"typeahead", "autocomplete", "suggest"},
		{"period", "quarter"},
		{"favorite", "star", "bookmark"},
		{"catalog", "menu"},
		{"inventory", "stock"},
		{"segment", "audience", "cohort"},
		{"availability", "slot"},
		{"invoice", "bill"},
		{"subscription", "membership"},
		{"purchase", "buy"},
		{"wage", "salary", "compensation"},
		{"terminal", "reader"},
		{"dispute", "chargeback"},
		{"evidence", "proof"},
		{"location", "shop", "storefront", "outlet"},
		{"link", "url", "hyperlink"},
		{"banner", "announcement", "notice"},
		{"usage", "consumption", "utilization"},
		{"health", "ping", "heartbeat", "alive", "uptime"},

		{"device", "hardware"},
		{"abuse", "spam", "complaint"},
		{"price", "cost", "pricing"},
		{"due", "deadline", "overdue"},
		{"move", "shift", "drag", "relocate"},
		{"problem", "issue"},
		{"volume", "disk"},
		{"region", "datacenter"},
		{"instance", "server", "vm", "machine"},
		{"traffic", "bandwidth"},
		{"mfa", "factor", "authenticator"},
		{"check", "validate", "verify", "lint", "test"},
		{"schedule", "cron", "timer", "trigger", "nightly", "hourly", "daily", "weekly"},
		{"document", "doc", "article", "page", "knowledge", "pdf"},
		{"owner", "author", "creator"},
		{"metric", "measurement", "series", "statistic", "stats"},
		{"config", "configuration", "setting", "option", "preference"},
		{"version", "release", "revision", "draft"},
		{"publish", "promote", "release"},
		{"permission", "role", "access", "grant", "allow", "permit", "acl"},
		{"multiple", "several", "batch", "bulk"},
		{"request", "ask"},
		{"comment", "note", "remark", "reply", "feedback", "discussion", "journal"},
		{"approve", "accept", "confirm"},
		{"reject", "deny", "decline"},
		{"vulnerability", "cve"},
		{"stuck", "hung", "hang", "pending", "waiting", "blocked"},
		{"login", "signin", "logon", "authenticate", "session"},
		{"logout", "signout", "session"},
		{"register", "signup", "enroll", "enrol"},
		{"table", "collection"},
		{"column", "field", "attribute", "property"},
		{"row", "record", "entry", "item"},
		{"file", "image", "picture", "photo", "media", "asset", "attachment", "upload", "spreadsheet", "workbook", "deck", "presentation", "pdf"},
		{"folder", "directory"},
		{"download", "export"},
		{"sort", "reorder", "rearrange"},
		{"assign", "give", "allocate", "grant"},
		{"app", "application"},
		{"rotate", "regenerate", "renew", "roll"},
		{"rollback", "revert", "undo", "restore"},
		{"sso", "oauth", "saml", "oidc", "openid"},
		{"branch", "ref"},
		{"tag", "ref"},
		// Abbreviations APIs write in names and paths.
		{"transaction", "tx", "txs", "txn"},
		{"address", "addr"},
		{"environment", "env"},
		{"information", "info"},
		{"parameter", "param"},
		{"database", "db", "dbs"},
		{"message", "msg"},
		{"certificate", "cert"},
		{"specification", "spec"},
		{"variable", "var"},
		{"attribute", "attr"},
		{"directory", "dir"},
		{"authentication", "auth", "authn"},
		{"authorization", "authz"},
		{"package", "pkg"},
		{"image", "img"},
		{"source", "src"},
		{"destination", "dest", "dst"},
		{"description", "desc"},
	} {
		stemmed := stemAll(group)
		for _, w := range stemmed {
			for _, o := range stemmed {
				if o != w && !slices.Contains(synonyms[w], o) {
					synonyms[w] = append(synonyms[w], o)
				}
			}
		}
	}
	// Words that also ask for another, which does not ask for them: a
	// subscription is to a plan, but "plan a milestone" subscribes to
	// nothing.
	for w, also := range map[string]string{"subscription": "plan", "ci": "status", "tarball": "archive", "zipball": "archive",
		"hour": "time", "minute": "time", "traffic": "transfer", "location": "region", "channel": "conversation",
		"song": "track", "tune": "track", "tracklist": "track", "podcast": "show episode", "speaker": "device", "popular": "top",
		"folder": "tree", "lock": "protect", "money": "balance", "funds": "balance", "bridge": "conference", "profile": "user", "handle": "username", "showcase": "album",
		"email": "message", "rule": "filter", "feed": "activity timeline", "livestream": "live stream broadcast", "owe": "payable receivable",
		"unsubscribe": "subscription delete", "unfollow": "follow delete", "unwatch": "watch delete", "unstar": "star delete",
		"appointment": "event meeting booking", "add": "invite", "remove": "kick", "remind": "reminder",
		"replica": "scale", "unallocated": "available",
		"backup": "snapshot", "scale": "resize", "gpu": "accelerator", "outdated": "deprecate deprecation",
		"sku": "product", "language": "locale", "relationship": "association", "put": "add",
		"litigation": "legal hold", "lawsuit": "legal hold", "flush": "invalidate purge", "siem": "syslog",
		"hierarchy": "tree", "promo": "coupon promotion", "subtitle": "caption", "genre": "category", "ban": "blocklist block",
		"gradually": "phased", "country": "territory", "udid": "device", "iphone": "device",
		"variable": "env parameter", "upvote": "like vote reaction", "hostname": "domain vhost host", "totp": "mfa factor otp", "ping": "echo", "zone": "region datacenter", "datacenter": "zone",
		"total": "statistics", "biography": "person profile", "bio": "person profile",
		"throttle": "rate limit", "allowance": "quota limit", "fake": "simulate simulation", "pretend": "simulate simulation", "ledger": "bookkeeping", "unhook": "disconnect remove unlink", "pause": "disable", "seat": "license", "destination": "target", "note": "annotation", "comment": "annotation",
		"reboot": "restart", "recently": "latest", "newest": "latest", "artwork": "image", "hot": "trend",
		"unlike": "favorite like save delete remove", "scrub": "anonymize delete", "stage": "section step phase",
		"apk": "release build", "ipa": "release build", "product": "item",
		"charged": "billable billing", "deliverable": "validate validation",
		"play": "playback start", "heart": "save favorite like reaction", "console": "log trace", "occurrence": "instance",
		"ram": "memory", "clash": "conflict", "inherit": "cascade", "look": "review", "hold": "reservation reserve",
		"attribute": "schema", "pager": "oncall", "tablet": "device", "forecast": "preview", "valid": "validate validation",
		"annotate": "note annotation", "room": "resource", "paperwork": "requirement document", "credit": "balance",
		"text": "message sms", "restart": "reboot", "sequence": "cadence", "token": "authorization", "block": "firewall",
		"lacp": "link aggregation", "win": "success", "upload": "import", "outcome": "disposition", "dial": "call",
		"output": "log", "dropdown": "variable", "status": "stage", "company": "account", "outside": "external",
		"whenever": "alert notification", "raw": "mime", "dump": "get", "plugged": "client", "gb": "usage", "script": "query",
		"bought": "purchase inventory", "taint": "node update", "vendor": "manufacturer", "cabinet": "rack",
		"free": "available", "broker": "identity provider", "save": "bookmark star favorite",
		"subscribe": "follow watch subscription", "box": "server instance machine", "activity": "action",
		"snapshot": "image backup", "video": "asset", "class": "course", "roster": "member student",
		"plot": "timeseries series", "chart": "timeseries series", "trend": "timeseries series",
		"disconnect": "unlink remove delete", "permission": "consent", "suggestion": "insight recommendation",
		"recommendation": "insight suggestion", "enroll": "student member", "xlsx": "export", "excel": "export",
		"docx": "export", "pptx": "export", "webhook": "watch", "spend": "cost usage billing", "spent": "cost usage billing",
		"month": "monthly", "year": "yearly annual", "week": "weekly", "day": "daily",
		"vat": "tax", "province": "region", "logo": "branding brand", "rail": "channel"} {
		synonyms[stem(w)] = append(synonyms[stem(w)], stemAll(strings.Fields(also))...)
	}
}

func stemAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = stem(w)
	}
	return out
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

// plural reports whether w, stemmed to t, reads as a plural ("projects",
// "boards"): an s that stem takes off, not of -ss, -us or -is (access,
// status, analysis), nor of the words that only end like one
// (notPlurals). A verb's s passes ("owns"), which a path seldom ends in.
func plural(w, t string) bool {
	return t != w && strings.HasSuffix(w, "s") && !notPlurals[w] &&
		!strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is")
}

// notPlurals end in an s that is no plural's.
var notPlurals = map[string]bool{"always": true, "news": true, "https": true, "series": true, "species": true, "lens": true,
	"atlas": true, "canvas": true, "perhaps": true, "sometimes": true, "whereas": true, "besides": true, "towards": true, "afterwards": true}

// collectionTerm is the term of the collection a path ends in: the last
// word of its last segment when that word is a plural (/projects,
// /projects/{id}/endpoints, /users.json, /conversations.list,
// /items:batchGet); "" when the path ends in a key (/projects/{id}) or a
// single thing (/lists/{id}/board).
func collectionTerm(path string) string {
	path, _, _ = strings.Cut(path, "?")
	path = strings.TrimRight(path, "/")
	seg := path[strings.LastIndexByte(path, '/')+1:]
	seg, _, _ = strings.Cut(seg, ".") // a format, or an RPC method: /users.json, /conversations.list
	seg, _, _ = strings.Cut(seg, ":") // a custom method: /items:batchGet
	if strings.Contains(seg, "{") {
		return ""
	}
	ws := words(seg)
	if len(ws) == 0 {
		return ""
	}
	w := ws[len(ws)-1]
	if t := stem(w); plural(w, t) {
		return t
	}
	return ""
}

// manyGroups are the groups of the query's plurals (qterm.many): a tool
// whose path ends in the collection of one of them, or of a synonym of
// one, lists what the query asks about.
func manyGroups(weights map[string]qterm) map[int32]bool {
	var out map[int32]bool
	for _, q := range weights {
		if q.many {
			if out == nil {
				out = map[int32]bool{}
			}
			out[q.group] = true
		}
	}
	return out
}
