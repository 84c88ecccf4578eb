package demo

import (
	"encoding/base64"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Page sizes of the paged reads.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

func (s *Server) routes() {
	for _, rt := range s.routeList() {
		s.mux.HandleFunc(rt.pattern, rt.handler)
	}
}

type route struct {
	pattern string
	handler http.HandlerFunc
}

// routeList is every route the service answers behind its token and
// workspace checks; openapi.yaml describes each one (a test holds them
// together).
func (s *Server) routeList() []route {
	return []route{
		// Monitor: reads.
		{"GET /v1/jobs", s.read(searchJobs)},
		{"GET /v1/jobs/{id}", s.read(getJob)},
		{"GET /v1/jobs/{id}/history", s.read(getJobHistory)},
		{"GET /v1/jobs/{id}/dependencies", s.read(getJobDependencies)},
		{"GET /v1/jobs/{id}/payload", s.read(getJobPayload)},
		{"GET /v1/jobs/{id}/output", s.read(getJobOutput)},
		{"GET /v1/queues", s.read(listQueues)},
		{"GET /v1/queues/{name}", s.read(getQueue)},
		{"GET /v1/tags/facet", s.read(getTagFacet)},
		{"GET /v1/schedules", s.read(listSchedules)},
		{"GET /v1/schedules/{id}", s.read(getSchedule)},
		{"GET /v1/audit", s.read(listAudit)},
		{"GET /v1/observers", s.read(listObservers)},
		{"GET /v1/workflows", s.read(listWorkflows)},
		{"GET /v1/workflows/{id}", s.read(getWorkflow)},
		{"GET /v1/workflows/{id}/jobs", s.read(listWorkflowJobs)},
		// Operator: audited writes.
		{"POST /v1/jobs/{id}/requeue", s.write(requeueJob)},
		{"POST /v1/jobs/{id}/cancel", s.write(cancelJob)},
		{"POST /v1/schedules/{id}/trigger", s.write(triggerSchedule)},
		{"POST /v1/queues/{name}/concurrency", s.write(setConcurrencyLimit)},
		{"POST /v1/queues/{name}/pause", s.write(pauseQueue)},
		{"POST /v1/queues/{name}/resume", s.write(resumeQueue)},
		{"POST /v1/workflows/{id}/cancel", s.write(cancelWorkflow)},
		// Knowledge base.
		{"GET /kb/status", s.read(kbStatus)},
		{"GET /kb/search", s.read(kbSearch)},
	}
}

// page is a cursor-paged list. Next is omitted on the last page.
type page struct {
	Items any    `json:"items"`
	Next  string `json:"next,omitempty"`
	More  bool   `json:"more"`
	Total int    `json:"total"`
}

// paginate reads limit and after and returns the window [lo, hi) of n
// items with the page's cursor fields, or a 400 reply.
func paginate(c *call, n int) (lo, hi int, next string, bad *reply) {
	q := c.r.URL.Query()
	limit, bad := sizeParam(q.Get("limit"), "limit", defaultPageSize, maxPageSize)
	if bad != nil {
		return 0, 0, "", bad
	}
	if after := q.Get("after"); after != "" {
		raw, err := base64.RawURLEncoding.DecodeString(after)
		off, ok := strings.CutPrefix(string(raw), "o:")
		v, err2 := strconv.Atoi(off)
		if err != nil || !ok || err2 != nil || v < 0 {
			r := fail(http.StatusBadRequest, "invalid cursor", "after must be a cursor returned as next by this endpoint")
			return 0, 0, "", &r
		}
		lo = v
	}
	lo = min(lo, n)
	hi = min(lo+limit, n)
	if hi < n {
		next = base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(hi)))
	}
	return lo, hi, next, nil
}

// sizeParam parses a positive size, clamping it to max.
func sizeParam(v, name string, def, max int) (int, *reply) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		r := fail(http.StatusBadRequest, "invalid "+name, name+" must be a positive integer")
		return 0, &r
	}
	return min(n, max), nil
}

func notFound(what, id string) reply {
	return fail(http.StatusNotFound, "not found", "no "+what+" "+quote(id)+" in this workspace")
}

func validState(s string) bool {
	switch s {
	case stateEnqueued, stateRunning, stateSucceeded, stateFailed, stateCancelled:
		return true
	}
	return false
}

// tagFilter is one term of the tag grammar: "key=value" matches that keyed
// tag, "key=*" any tag under key, and a bare "value" the plain label.
type tagFilter struct {
	key, value string
	keyed, any bool
}

func parseTagFilter(s string) (tagFilter, bool) {
	k, v, keyed := strings.Cut(s, "=")
	switch {
	case s == "":
		return tagFilter{}, false
	case !keyed:
		return tagFilter{value: s}, true
	case k == "" || v == "" || strings.Contains(v, "="):
		return tagFilter{}, false
	}
	return tagFilter{key: k, value: v, keyed: true, any: v == "*"}, true
}

func (f tagFilter) match(tags []string) bool {
	for _, t := range tags {
		k, v, keyed := strings.Cut(t, "=")
		switch {
		case !f.keyed && !keyed && t == f.value:
			return true
		case f.keyed && keyed && k == f.key && (f.any || v == f.value):
			return true
		}
	}
	return false
}

// searchJobs: GET /v1/jobs?state=&queue=&tag=&sort=&limit=&after=
func searchJobs(c *call) reply {
	q := c.r.URL.Query()
	state, queue := q.Get("state"), q.Get("queue")
	if state != "" && !validState(state) {
		return fail(http.StatusBadRequest, "invalid state", "state must be one of Enqueued, Running, Succeeded, Failed, Cancelled")
	}
	var filters []tagFilter
	for _, t := range q["tag"] {
		f, ok := parseTagFilter(t)
		if !ok {
			return fail(http.StatusBadRequest, "invalid tag", "tag "+quote(t)+` must be "key=value", "key=*" or a bare "value"`)
		}
		filters = append(filters, f)
	}
	order := q.Get("sort")
	if order != "" && order != "newest_first" && order != "oldest_first" {
		return fail(http.StatusBadRequest, "invalid sort", "sort must be newest_first or oldest_first")
	}
	var matched []*job
	for _, j := range c.ws.order {
		if state != "" && j.State != state || queue != "" && j.Queue != queue {
			continue
		}
		all := true
		for _, f := range filters {
			all = all && f.match(j.Tags)
		}
		if all {
			matched = append(matched, j)
		}
	}
	if order != "oldest_first" {
		for a, b := 0, len(matched)-1; a < b; a, b = a+1, b-1 {
			matched[a], matched[b] = matched[b], matched[a]
		}
	}
	lo, hi, next, bad := paginate(c, len(matched))
	if bad != nil {
		return *bad
	}
	items := append([]*job{}, matched[lo:hi]...)
	return ok(page{Items: items, Next: next, More: next != "", Total: len(matched)})
}

func getJob(c *call) reply {
	j := c.ws.jobs[c.r.PathValue("id")]
	if j == nil {
		return notFound("job", c.r.PathValue("id"))
	}
	return ok(j.detail())
}

func getJobHistory(c *call) reply {
	j := c.ws.jobs[c.r.PathValue("id")]
	if j == nil {
		return notFound("job", c.r.PathValue("id"))
	}
	return ok(map[string]any{"jobId": j.ID, "state": j.State, "transitions": j.history})
}

type parentRef struct {
	JobID string `json:"jobId"`
	State string `json:"state"`
}

func getJobDependencies(c *call) reply {
	j := c.ws.jobs[c.r.PathValue("id")]
	if j == nil {
		return notFound("job", c.r.PathValue("id"))
	}
	gating := []parentRef{}
	for _, p := range j.parents {
		if pj := c.ws.jobs[p]; pj != nil && !terminal(pj.State) {
			gating = append(gating, parentRef{p, pj.State})
		}
	}
	children := []string{}
	for _, o := range c.ws.order {
		for _, p := range o.parents {
			if p == j.ID {
				children = append(children, o.ID)
			}
		}
	}
	return ok(map[string]any{
		"jobId": j.ID, "parentIds": append([]string{}, j.parents...),
		"gatingParents": gating, "childIds": children,
	})
}

func rawBytes(b []byte) reply {
	return reply{status: http.StatusOK, ctype: "application/octet-stream", raw: b}
}

// getJobPayload returns the job's argument bytes as they were enqueued.
// Seeded payloads are never modified, so sharing the slice is safe.
func getJobPayload(c *call) reply {
	j := c.ws.jobs[c.r.PathValue("id")]
	if j == nil {
		return notFound("job", c.r.PathValue("id"))
	}
	return rawBytes(j.payload)
}

func getJobOutput(c *call) reply {
	j := c.ws.jobs[c.r.PathValue("id")]
	if j == nil {
		return notFound("job", c.r.PathValue("id"))
	}
	if j.output == nil {
		return fail(http.StatusNotFound, "not found", "job "+quote(j.ID)+" has no output (state "+j.State+")")
	}
	return rawBytes(j.output)
}

func listQueues(c *call) reply {
	qs := []queueView{}
	for _, q := range c.ws.sortedQueues() {
		qs = append(qs, c.ws.queueView(q))
	}
	return ok(map[string]any{"queues": qs})
}

func getQueue(c *call) reply {
	q := c.ws.queues[c.r.PathValue("name")]
	if q == nil {
		return notFound("queue", c.r.PathValue("name"))
	}
	return ok(c.ws.queueView(q))
}

type bucket struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// getTagFacet counts tag values: under key when key is non-empty, plain
// labels when it is empty. max keeps the top buckets by count.
func getTagFacet(c *call) reply {
	q := c.r.URL.Query()
	key := q.Get("key")
	if strings.Contains(key, "=") {
		return fail(http.StatusBadRequest, "invalid key", "key is a tag key without '='; use \"\" for plain labels")
	}
	max, bad := sizeParam(q.Get("max"), "max", defaultPageSize, maxPageSize)
	if bad != nil {
		return *bad
	}
	counts := map[string]int{}
	for _, j := range c.ws.order {
		for _, t := range j.Tags {
			k, v, keyed := strings.Cut(t, "=")
			switch {
			case key == "" && !keyed:
				counts[t]++
			case key != "" && keyed && k == key:
				counts[v]++
			}
		}
	}
	buckets := []bucket{}
	for v, n := range counts {
		buckets = append(buckets, bucket{v, n})
	}
	sort.Slice(buckets, func(a, b int) bool {
		if buckets[a].Count != buckets[b].Count {
			return buckets[a].Count > buckets[b].Count
		}
		return buckets[a].Value < buckets[b].Value
	})
	distinct := len(buckets)
	buckets = buckets[:min(max, distinct)]
	return ok(map[string]any{"key": key, "buckets": buckets, "distinctValues": distinct})
}

func listSchedules(c *call) reply {
	scs := []scheduleView{}
	for _, sc := range c.ws.schedules {
		scs = append(scs, c.ws.scheduleView(sc))
	}
	sort.Slice(scs, func(a, b int) bool { return scs[a].ID < scs[b].ID })
	return ok(map[string]any{"schedules": scs})
}

func getSchedule(c *call) reply {
	sc := c.ws.schedule(c.r.PathValue("id"))
	if sc == nil {
		return notFound("schedule", c.r.PathValue("id"))
	}
	return ok(c.ws.scheduleView(sc))
}

// listAudit returns the records about one target, oldest first. A target
// nothing happened to has an empty trail, not a 404.
func listAudit(c *call) reply {
	target := c.r.URL.Query().Get("target")
	if target == "" {
		return fail(http.StatusBadRequest, "target required", "target must be a job id, a queue name or a schedule id")
	}
	recs := []AuditRecord{}
	for _, a := range c.ws.audit {
		if a.Target == target {
			recs = append(recs, a)
		}
	}
	return ok(map[string]any{"target": target, "records": recs})
}

func listObservers(c *call) reply {
	return ok(map[string]any{"observers": c.ws.observers})
}

// listWorkflows: GET /v1/workflows?status=&limit=&after=, newest first.
func listWorkflows(c *call) reply {
	status := c.r.URL.Query().Get("status")
	if status != "" && status != stateRunning && status != stateFailed && status != stateCancelled && status != stateSucceeded {
		return fail(http.StatusBadRequest, "invalid status", "status must be one of Running, Failed, Cancelled, Succeeded")
	}
	views := []workflowView{}
	for _, wf := range c.ws.workflows {
		if v := c.ws.workflowView(wf); status == "" || v.Status == status {
			views = append(views, v)
		}
	}
	sort.SliceStable(views, func(a, b int) bool {
		if !views[a].CreatedAt.Equal(views[b].CreatedAt) {
			return views[a].CreatedAt.After(views[b].CreatedAt)
		}
		return views[a].WorkflowID > views[b].WorkflowID
	})
	lo, hi, next, bad := paginate(c, len(views))
	if bad != nil {
		return *bad
	}
	return ok(page{Items: views[lo:hi], Next: next, More: next != "", Total: len(views)})
}

func getWorkflow(c *call) reply {
	wf := c.ws.workflow(c.r.PathValue("id"))
	if wf == nil {
		return notFound("workflow", c.r.PathValue("id"))
	}
	return ok(c.ws.workflowDetail(wf))
}

func listWorkflowJobs(c *call) reply {
	wf := c.ws.workflow(c.r.PathValue("id"))
	if wf == nil {
		return notFound("workflow", c.r.PathValue("id"))
	}
	jobs := []*job{}
	for _, id := range wf.members {
		jobs = append(jobs, c.ws.jobs[id])
	}
	return ok(map[string]any{"workflowId": wf.ID, "jobs": jobs})
}
