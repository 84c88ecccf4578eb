package demo

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"time"
)

// The Operator's writes. Each one changes state and appends an audit record
// naming the X-Actor; a refused write (404, 409) changes nothing and is not
// audited.

// onlyKeys refuses body keys other than reason and the extras.
func onlyKeys(c *call, extra ...string) *reply {
	for k := range c.body {
		known := k == "reason"
		for _, e := range extra {
			known = known || k == e
		}
		if !known {
			r := fail(http.StatusBadRequest, "unknown field", "unknown body field "+quote(k))
			return &r
		}
	}
	return nil
}

// requeueJob starts a finished job over with a fresh attempt budget.
func requeueJob(c *call) reply {
	if bad := onlyKeys(c); bad != nil {
		return *bad
	}
	j := c.ws.jobs[c.r.PathValue("id")]
	if j == nil {
		return notFound("job", c.r.PathValue("id"))
	}
	if !terminal(j.State) {
		return problem(http.StatusConflict, "job not finished", "Job is not finished",
			"job "+quote(j.ID)+" is "+j.State+"; only Succeeded, Failed or Cancelled jobs can be requeued", "/v1/jobs/"+j.ID)
	}
	j.transition(c.now, stateEnqueued, 0, nil)
	j.Attempt, j.StartedAt, j.FinishedAt, j.CancelRequested, j.output = 0, nil, nil, false, nil
	c.ws.appendAudit(c, "job.requeue", j.ID, "")
	return ok(j.detail())
}

// cancelJob cancels a waiting job at once and asks a running one to stop
// at its next checkpoint (cooperative cancellation).
func cancelJob(c *call) reply {
	if bad := onlyKeys(c); bad != nil {
		return *bad
	}
	j := c.ws.jobs[c.r.PathValue("id")]
	if j == nil {
		return notFound("job", c.r.PathValue("id"))
	}
	switch j.State {
	case stateEnqueued:
		j.transition(c.now, stateCancelled, j.Attempt, nil)
		now := c.now
		j.FinishedAt = &now
		c.ws.appendAudit(c, "job.cancel", j.ID, "cancelled while waiting")
	case stateRunning:
		j.CancelRequested = true
		c.ws.appendAudit(c, "job.cancel", j.ID, "cancellation requested; the job stops at its next checkpoint")
	default:
		return problem(http.StatusConflict, "job already finished", "Job already finished",
			"job "+quote(j.ID)+" is already "+j.State+" and cannot be cancelled", "/v1/jobs/"+j.ID)
	}
	return ok(j.detail())
}

// triggerSchedule enqueues a one-off run beside the schedule's cadence;
// nextDue does not move.
func triggerSchedule(c *call) reply {
	if bad := onlyKeys(c); bad != nil {
		return *bad
	}
	sc := c.ws.schedule(c.r.PathValue("id"))
	if sc == nil {
		return notFound("schedule", c.r.PathValue("id"))
	}
	inst := "/v1/schedules/" + sc.ID
	if sc.Error != "" {
		return problem(http.StatusConflict, "schedule unresolvable", "Schedule cannot run on this host", sc.Error, inst)
	}
	if sc.NoOverlap && c.ws.scheduleView(sc).HasLiveInstance {
		return problem(http.StatusConflict, "schedule run live", "A run is still live",
			"schedule "+quote(sc.ID)+" forbids overlap and a run is still live", inst)
	}
	j := &job{
		ID: jobID(c.ws.id, c.ws.nextJob), Kind: sc.WireName, Queue: sc.Queue, MaxAttempts: 3,
		Tags: []string{"trigger=manual"}, CreatedAt: c.now, ScheduleID: sc.ID,
		Note:        "One-off run of schedule " + sc.ID + " triggered by an operator; the schedule's cadence is unchanged.",
		payload:     fmt.Appendf(nil, `{"scheduleId":%s,"trigger":"manual","tick":%s}`, quote(sc.ID), quote(c.now.Format(time.RFC3339))),
		payloadType: "application/json",
	}
	j.transition(c.now, stateEnqueued, 0, nil)
	c.ws.add(j)
	c.ws.appendAudit(c, "schedule.trigger", sc.ID, "job="+j.ID)
	rep := ok(map[string]any{"scheduleId": sc.ID, "jobId": j.ID, "state": j.State, "nextDue": sc.NextDue})
	rep.status = http.StatusCreated
	rep.header = map[string]string{"Location": "/v1/jobs/" + j.ID}
	return rep
}

// setConcurrencyLimit sets the queue's cap from {"limit": N}. An absent
// limit and a null limit both remove the cap.
func setConcurrencyLimit(c *call) reply {
	if bad := onlyKeys(c, "limit"); bad != nil {
		return *bad
	}
	q := c.ws.queues[c.r.PathValue("name")]
	if q == nil {
		return notFound("queue", c.r.PathValue("name"))
	}
	raw, present := c.body["limit"]
	if !present || string(raw) == "null" {
		q.ConcurrencyLimit = nil
		c.ws.appendAudit(c, "queue.concurrency_limit.remove", q.Name, "")
		return ok(c.ws.queueView(q))
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f < 1 || f > 10000 {
		return fail(http.StatusBadRequest, "invalid limit", "limit must be an integer from 1 to 10000, or null to remove the cap")
	}
	n := int(f)
	q.ConcurrencyLimit = &n
	c.ws.appendAudit(c, "queue.concurrency_limit.set", q.Name, fmt.Sprintf("limit=%d", n))
	return ok(c.ws.queueView(q))
}

// pauseQueue stops the queue handing out work; running jobs finish.
func pauseQueue(c *call) reply {
	if bad := onlyKeys(c); bad != nil {
		return *bad
	}
	q := c.ws.queues[c.r.PathValue("name")]
	if q == nil {
		return notFound("queue", c.r.PathValue("name"))
	}
	if !q.Paused {
		now := c.now
		q.Paused, q.PausedAt = true, &now
	}
	c.ws.appendAudit(c, "queue.pause", q.Name, "")
	return ok(c.ws.queueView(q))
}

func resumeQueue(c *call) reply {
	if bad := onlyKeys(c); bad != nil {
		return *bad
	}
	q := c.ws.queues[c.r.PathValue("name")]
	if q == nil {
		return notFound("queue", c.r.PathValue("name"))
	}
	q.Paused, q.PausedAt = false, nil
	c.ws.appendAudit(c, "queue.resume", q.Name, "")
	return ok(c.ws.queueView(q))
}

// cancelWorkflow cancels the waiting members of a running workflow and
// asks its running members to stop.
func cancelWorkflow(c *call) reply {
	if bad := onlyKeys(c); bad != nil {
		return *bad
	}
	wf := c.ws.workflow(c.r.PathValue("id"))
	if wf == nil {
		return notFound("workflow", c.r.PathValue("id"))
	}
	if st := c.ws.workflowView(wf).Status; st != stateRunning {
		return problem(http.StatusConflict, "workflow already finished", "Workflow already finished",
			"workflow "+quote(wf.ID)+" is already "+st, "/v1/workflows/"+wf.ID)
	}
	cancelled, stopping := 0, 0
	for _, id := range wf.members {
		switch j := c.ws.jobs[id]; j.State {
		case stateEnqueued:
			j.transition(c.now, stateCancelled, j.Attempt, nil)
			now := c.now
			j.FinishedAt = &now
			cancelled++
		case stateRunning:
			j.CancelRequested = true
			stopping++
		}
	}
	wf.cancelled = true
	c.ws.appendAudit(c, "workflow.cancel", wf.ID, fmt.Sprintf("cancelled=%d stopping=%d", cancelled, stopping))
	return ok(c.ws.workflowDetail(wf))
}
