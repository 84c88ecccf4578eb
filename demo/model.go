package demo

import (
	"sort"
	"time"
)

// Job states.
const (
	stateEnqueued  = "Enqueued"
	stateRunning   = "Running"
	stateSucceeded = "Succeeded"
	stateFailed    = "Failed"
	stateCancelled = "Cancelled"
)

func terminal(state string) bool {
	return state == stateSucceeded || state == stateFailed || state == stateCancelled
}

// workspace is one tenant's state. Its fields are guarded by Server.mu.
type workspace struct {
	id        string
	jobs      map[string]*job
	order     []*job // creation order
	nextJob   int    // number of the next job id
	queues    map[string]*queue
	schedules []*schedule
	observers []*observer
	workflows []*workflow
	audit     []AuditRecord
	kbEnabled bool
	docs      []*document
}

// job is a unit of work. The exported fields are its summary as JSON.
type job struct {
	ID              string     `json:"jobId"`
	Kind            string     `json:"kind"`
	Queue           string     `json:"queue"`
	State           string     `json:"state"`
	Attempt         int        `json:"attempt"`
	MaxAttempts     int        `json:"maxAttempts"`
	Tags            []string   `json:"tags"`
	CreatedAt       time.Time  `json:"createdAt"`
	StartedAt       *time.Time `json:"startedAt,omitempty"`
	FinishedAt      *time.Time `json:"finishedAt,omitempty"`
	CancelRequested bool       `json:"cancelRequested,omitempty"`
	WorkflowID      string     `json:"workflowId,omitempty"`
	ScheduleID      string     `json:"scheduleId,omitempty"`
	// Note is free text written by people and upstream systems alike; it
	// is untrusted.
	Note string `json:"note"`

	parents     []string
	history     []transition
	payload     []byte
	payloadType string
	output      []byte // nil: no output
	outputType  string
}

// jobDetail is a job as GET /v1/jobs/{id} shows it.
type jobDetail struct {
	*job
	ParentIDs          []string `json:"parentIds"`
	PayloadBytes       int      `json:"payloadBytes"`
	PayloadContentType string   `json:"payloadContentType"`
	OutputBytes        *int     `json:"outputBytes"`
	TransitionCount    int      `json:"transitionCount"`
}

func (j *job) detail() jobDetail {
	d := jobDetail{
		job:                j,
		ParentIDs:          append([]string{}, j.parents...),
		PayloadBytes:       len(j.payload),
		PayloadContentType: j.payloadType,
		TransitionCount:    len(j.history),
	}
	if j.output != nil {
		n := len(j.output)
		d.OutputBytes = &n
	}
	return d
}

// transition is one state change in a job's history. FailureDetail is set
// on failed attempts only and is sensitive: exception text that can quote
// payload content and customer data.
type transition struct {
	Ordinal       int       `json:"ordinal"`
	Timestamp     time.Time `json:"timestamp"`
	State         string    `json:"state"`
	Attempt       int       `json:"attempt"`
	FailureDetail *string   `json:"failureDetail"`
}

func (j *job) transition(at time.Time, state string, attempt int, detail *string) {
	j.history = append(j.history, transition{
		Ordinal: len(j.history) + 1, Timestamp: at, State: state, Attempt: attempt, FailureDetail: detail,
	})
	j.State = state
}

type queue struct {
	Name             string     `json:"name"`
	Description      string     `json:"description"`
	Paused           bool       `json:"paused"`
	PausedAt         *time.Time `json:"pausedAt,omitempty"`
	ConcurrencyLimit *int       `json:"concurrencyLimit"` // null: no cap
}

// stateCounts counts jobs by state.
type stateCounts struct {
	Enqueued  int `json:"enqueued"`
	Running   int `json:"running"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

func (c *stateCounts) add(state string) {
	switch state {
	case stateEnqueued:
		c.Enqueued++
	case stateRunning:
		c.Running++
	case stateSucceeded:
		c.Succeeded++
	case stateFailed:
		c.Failed++
	case stateCancelled:
		c.Cancelled++
	}
}

type queueView struct {
	*queue
	Counts stateCounts `json:"counts"`
}

func (ws *workspace) queueView(q *queue) queueView {
	v := queueView{queue: q}
	for _, j := range ws.order {
		if j.Queue == q.Name {
			v.Counts.add(j.State)
		}
	}
	return v
}

func (ws *workspace) sortedQueues() []*queue {
	qs := make([]*queue, 0, len(ws.queues))
	for _, q := range ws.queues {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(a, b int) bool { return qs[a].Name < qs[b].Name })
	return qs
}

// schedule is a recurring job. A schedule whose job type or time zone
// this host cannot resolve is kept and reported with Error set.
type schedule struct {
	ID           string     `json:"scheduleId"`
	Cron         string     `json:"cron"`
	WireName     string     `json:"wireName"`
	Queue        string     `json:"queue"`
	TimeZoneID   string     `json:"timeZoneId,omitempty"`
	CatchUp      bool       `json:"catchUp"`
	NoOverlap    bool       `json:"noOverlap"`
	Cursor       time.Time  `json:"cursor"` // the last tick handled
	NextDue      *time.Time `json:"nextDue,omitempty"`
	SkippedTicks int        `json:"skippedTicks"`
	Error        string     `json:"error,omitempty"`
}

type scheduleView struct {
	*schedule
	HasLiveInstance bool `json:"hasLiveInstance"`
}

func (ws *workspace) scheduleView(sc *schedule) scheduleView {
	v := scheduleView{schedule: sc}
	for _, j := range ws.order {
		if j.ScheduleID == sc.ID && !terminal(j.State) {
			v.HasLiveInstance = true
			break
		}
	}
	return v
}

// observer is a change-feed consumer. Cursor -1: nothing delivered yet;
// Pending 0: caught up.
type observer struct {
	Name            string     `json:"name"`
	Description     string     `json:"description"`
	Cursor          int64      `json:"cursor"`
	Pending         int        `json:"pending"`
	LastDeliveredAt *time.Time `json:"lastDeliveredAt,omitempty"`
}

// workflow groups jobs. Its status is derived from its members.
type workflow struct {
	ID            string
	Name          string
	CreatedAt     time.Time
	RestartedFrom string
	members       []string
	cancelled     bool
}

type workflowView struct {
	WorkflowID    string    `json:"workflowId"`
	Name          string    `json:"name,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	Status        string    `json:"status"`
	MemberCount   int       `json:"memberCount"`
	RestartedFrom string    `json:"restartedFrom,omitempty"`
}

type workflowDetail struct {
	workflowView
	MemberStates stateCounts `json:"memberStates"`
	MemberIDs    []string    `json:"memberIds"`
}

func (ws *workspace) workflowView(wf *workflow) workflowView {
	var c stateCounts
	for _, id := range wf.members {
		c.add(ws.jobs[id].State)
	}
	status := stateSucceeded
	switch {
	case wf.cancelled:
		status = stateCancelled
	case c.Enqueued+c.Running > 0:
		status = stateRunning
	case c.Failed > 0:
		status = stateFailed
	case c.Cancelled > 0:
		status = stateCancelled
	}
	return workflowView{
		WorkflowID: wf.ID, Name: wf.Name, CreatedAt: wf.CreatedAt, Status: status,
		MemberCount: len(wf.members), RestartedFrom: wf.RestartedFrom,
	}
}

func (ws *workspace) workflowDetail(wf *workflow) workflowDetail {
	d := workflowDetail{workflowView: ws.workflowView(wf), MemberIDs: append([]string{}, wf.members...)}
	for _, id := range wf.members {
		d.MemberStates.add(ws.jobs[id].State)
	}
	return d
}

func (ws *workspace) workflow(id string) *workflow {
	for _, wf := range ws.workflows {
		if wf.ID == id {
			return wf
		}
	}
	return nil
}

func (ws *workspace) schedule(id string) *schedule {
	for _, sc := range ws.schedules {
		if sc.ID == id {
			return sc
		}
	}
	return nil
}

// document is a knowledge-base article. Some seeded articles carry prompt
// injections on purpose.
type document struct {
	ID    string
	Title string
	Body  string
}

func (ws *workspace) appendAudit(c *call, action, target, detail string) {
	ws.audit = append(ws.audit, AuditRecord{
		Time: c.now, Actor: c.actor, Action: action, Target: target,
		Workspace: ws.id, Detail: detail, Reason: c.reason,
	})
}
