package main

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpgw/gateway/fleet"
	"github.com/mcpgw/gateway/mcp"
	"github.com/mcpgw/gateway/proxy"
)

// metrics is the gateway's Prometheus registry. Labels are bounded: tool
// and upstream names come from the catalog, methods and outcomes from
// fixed sets; never a subject, workspace or argument.
type metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.CounterVec
	requestTime   *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	authFailures  *prometheus.CounterVec
	rateLimited   *prometheus.CounterVec
	toolCalls     *prometheus.CounterVec
	toolTime      *prometheus.HistogramVec
	upstreamResp  *prometheus.CounterVec
	upstreamTime  *prometheus.HistogramVec
	reloads       *prometheus.CounterVec
	catalogInfo   *prometheus.GaugeVec
	jwksFetches   *prometheus.CounterVec
	reloadedAtSec prometheus.Gauge
	lastReloadOK  prometheus.Gauge
	lastReloadSec prometheus.Gauge
	auditRecords  *prometheus.CounterVec
	auditFailures prometheus.Counter
	auditHealthy  prometheus.Gauge
	outputInvalid *prometheus.CounterVec
	limitCalls    *prometheus.CounterVec
	fleetFallback *prometheus.CounterVec
	fleetShared   prometheus.Gauge
	fleetReplicas prometheus.Gauge
	breakers      *breakerCollector

	// The children the per-request metrics ask for, by label values.
	requestSeries  series[requestKey, requestChildren]
	toolSeries     series[toolKey, toolChildren]
	upstreamSeries series[upstreamKey, upstreamChildren]
}

// series caches a metric's children by their label values. A vector's
// WithLabelValues hashes and checks every value under a lock on each
// call, and a request asks for six children; a map lookup finds them in
// about a third of the time. The label sets are bounded as the labels
// are, so the cache is too. A cached child outlives a DeleteLabelValues or
// Reset of its vector, whose counts it would then lose: these vectors are
// never pruned, and one that is must not be cached.
type series[K comparable, C any] struct {
	mu sync.RWMutex
	m  map[K]C
}

// get returns k's children, made by mk the first time k is asked for.
func (s *series[K, C]) get(k K, mk func(K) C) C {
	s.mu.RLock()
	c, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return c
	}
	c = mk(k)
	s.mu.Lock()
	if s.m == nil {
		s.m = map[K]C{}
	}
	s.m[k] = c
	s.mu.Unlock()
	return c
}

type requestKey struct {
	surface, method string
	status          int
}

type requestChildren struct {
	count prometheus.Counter
	time  prometheus.Observer
}

type toolKey struct{ tool, outcome string }

type toolChildren struct {
	calls   prometheus.Counter
	invalid prometheus.Counter  // nil unless the outcome is an invalid or departed output
	time    prometheus.Observer // nil for an unknown tool
}

type upstreamKey struct{ upstream, class string }

type upstreamChildren struct {
	resp prometheus.Counter
	time prometheus.Observer
}

// breakerCollector reports the serving catalog's circuit breakers when
// scraped: whether each upstream's own breaker is open, and how many
// workspaces' breakers are.
type breakerCollector struct {
	open, openWorkspaces *prometheus.Desc
	// state returns the breakers of the catalog serving now; nil before
	// one is installed.
	state atomic.Pointer[func() []proxy.BreakerState]
}

func (b *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- b.open; ch <- b.openWorkspaces }

func (b *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	f := b.state.Load()
	if f == nil {
		return
	}
	for _, s := range (*f)() {
		open := 0.0
		if s.Open {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(b.open, prometheus.GaugeValue, open, s.Upstream)
		ch <- prometheus.MustNewConstMetric(b.openWorkspaces, prometheus.GaugeValue, float64(s.OpenWorkspaces), s.Upstream)
	}
}

var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_requests_total", Help: "Requests by surface, method and HTTP status."}, []string{"surface", "method", "status"})
	m.requestTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gateway_request_duration_seconds", Help: "Whole-request latency by surface and method.", Buckets: latencyBuckets}, []string{"surface", "method"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_in_flight_requests", Help: "Requests being served."})
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_auth_failures_total", Help: "Rejected bearer tokens by reason."}, []string{"reason"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_rate_limited_total", Help: "Requests answered 429, by limit kind."}, []string{"kind"})
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_tool_calls_total", Help: "Tool calls by tool and outcome (ok, tool_error, denied, not_found, truncated, refused, output_invalid, unknown_tool)."}, []string{"tool", "outcome"})
	m.toolTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gateway_tool_call_duration_seconds", Help: "Tool call latency, gateway work and upstream together.", Buckets: latencyBuckets}, []string{"tool"})
	m.upstreamResp = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_upstream_responses_total", Help: "Upstream exchanges by upstream and status class (2xx..5xx, or error for transport failures)."}, []string{"upstream", "class"})
	m.upstreamTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gateway_upstream_request_duration_seconds", Help: "Upstream exchange latency by upstream.", Buckets: latencyBuckets}, []string{"upstream"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_catalog_reloads_total", Help: "Catalog reloads by result (ok, error)."}, []string{"result"})
	m.catalogInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gateway_catalog_info", Help: "The catalog being served, by its SHA-256 (value 1)."}, []string{"hash"})
	m.jwksFetches = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_jwks_fetches_total", Help: "JWKS fetches by result."}, []string{"result"})
	m.reloadedAtSec = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_catalog_loaded_timestamp_seconds", Help: "When the current catalog was installed."})
	m.lastReloadOK = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_catalog_last_reload_success", Help: "1 when the last catalog load or reload succeeded, 0 when it failed and an older catalog is still serving."})
	m.lastReloadSec = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_catalog_last_reload_timestamp_seconds", Help: "When the catalog was last loaded or reloaded, successfully or not."})
	m.reg.MustRegister(m.lastReloadOK, m.lastReloadSec)
	m.auditRecords = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_audit_records_total", Help: "Audit records written, by outcome (ok, tool_error, denied, refused; started for the record written before a write is sent)."}, []string{"outcome"})
	m.auditFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "gateway_audit_failures_total", Help: "Audit records that could not be written."})
	m.auditHealthy = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_audit_healthy", Help: "1 when the last audit record was written, 0 when it failed (write calls are then refused)."})
	m.auditHealthy.Set(1)
	m.reg.MustRegister(m.auditRecords, m.auditFailures, m.auditHealthy)
	m.outputInvalid = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_output_schema_violations_total", Help: "Upstream answers that broke their tool's output_schema (a read's became a tool error; a write's was returned with a note), by tool."}, []string{"tool"})
	m.reg.MustRegister(m.outputInvalid)
	m.limitCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_limit_calls_total", Help: "tools/call counted against a rate limit or quota, by rule (a limits.rules name, or principal and tool for limits.rate) and result (allowed, refused_rate, refused_quota). Never by subject or workspace."}, []string{"rule", "result"})
	m.fleetFallback = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_limit_store_fallbacks_total", Help: "Limit store operations counted locally because Redis failed, was too slow or was away, by operation (take, acquire, release, heartbeat)."}, []string{"op"})
	m.fleetShared = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_limit_store_shared", Help: "1 while limits are counted in Redis, shared by the fleet; 0 while this process counts alone (no Redis configured, or Redis away)."})
	m.fleetReplicas = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gateway_fleet_replicas", Help: "Gateway replicas counting limits in the same Redis, as last seen; local limits are scaled to 1/N of each limit while Redis is away."})
	m.fleetReplicas.Set(1)
	m.reg.MustRegister(m.limitCalls, m.fleetFallback, m.fleetShared, m.fleetReplicas)
	m.breakers = &breakerCollector{
		open:           prometheus.NewDesc("gateway_upstream_breaker_open", "1 while the upstream's own circuit breaker is open: every workspace's calls to it fail fast.", []string{"upstream"}, nil),
		openWorkspaces: prometheus.NewDesc("gateway_upstream_workspace_breakers_open", "Workspaces whose own circuit breaker for the upstream is open: their calls fail fast while other workspaces' go through.", []string{"upstream"}, nil),
	}
	m.reg.MustRegister(m.breakers)
	m.reg.MustRegister(m.requests, m.requestTime, m.inFlight, m.authFailures, m.rateLimited, m.toolCalls, m.toolTime,
		m.upstreamResp, m.upstreamTime, m.reloads, m.catalogInfo, m.jwksFetches, m.reloadedAtSec,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range []string{"ok", "error"} {
		m.reloads.WithLabelValues(r)
	}
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *metrics) catalogLoaded(hash string) {
	m.catalogInfo.Reset()
	m.catalogInfo.WithLabelValues(hash).Set(1)
	m.reloadedAtSec.SetToCurrentTime()
}

func (m *metrics) reload(result string) { m.reloads.WithLabelValues(result).Inc() }

// lastReload records the outcome of the last load or reload.
func (m *metrics) lastReload(ok bool, at time.Time) {
	if ok {
		m.lastReloadOK.Set(1)
	} else {
		m.lastReloadOK.Set(0)
	}
	m.lastReloadSec.Set(float64(at.UnixNano()) / 1e9)
}

func (m *metrics) jwksFetch(ok bool) {
	if ok {
		m.jwksFetches.WithLabelValues("ok").Inc()
	} else {
		m.jwksFetches.WithLabelValues("error").Inc()
	}
}

// proxy returns the core's view of the registry.
func (m *metrics) proxy() proxy.Metrics { return proxyMetrics{m} }

type proxyMetrics struct{ m *metrics }

func (p proxyMetrics) ToolCall(tool, outcome string, d time.Duration) {
	c := p.m.toolSeries.get(toolKey{tool, outcome}, func(k toolKey) (c toolChildren) {
		c.calls = p.m.toolCalls.WithLabelValues(k.tool, k.outcome)
		if k.outcome == proxy.OutcomeOutputInvalid || k.outcome == proxy.OutcomeOutputDeparted {
			c.invalid = p.m.outputInvalid.WithLabelValues(k.tool)
		}
		if k.outcome != proxy.OutcomeUnknownTool {
			c.time = p.m.toolTime.WithLabelValues(k.tool)
		}
		return c
	})
	c.calls.Inc()
	if c.invalid != nil {
		c.invalid.Inc()
	}
	if c.time != nil {
		c.time.Observe(d.Seconds())
	}
}

func (p proxyMetrics) Upstream(upstream string, status int, d time.Duration) {
	c := p.m.upstreamSeries.get(upstreamKey{upstream, statusClass(status)}, func(k upstreamKey) upstreamChildren {
		return upstreamChildren{p.m.upstreamResp.WithLabelValues(k.upstream, k.class), p.m.upstreamTime.WithLabelValues(k.upstream)}
	})
	c.resp.Inc()
	c.time.Observe(d.Seconds())
}

var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "error"
	}
	return statusClasses[status/100-1]
}

// audit returns the audit trail's view of the registry.
func (m *metrics) audit() proxy.AuditObserver { return auditMetrics{m} }

type auditMetrics struct{ m *metrics }

func (a auditMetrics) AuditRecord(outcome string, err error) {
	if err != nil {
		a.m.auditFailures.Inc()
		return
	}
	a.m.auditRecords.WithLabelValues(outcome).Inc()
}

func (a auditMetrics) AuditHealthy(ok bool) {
	if ok {
		a.m.auditHealthy.Set(1)
	} else {
		a.m.auditHealthy.Set(0)
	}
}

// surfaces returns the wire's view of the registry.
func (m *metrics) surfaces() mcp.Metrics { return surfaceMetrics{m} }

func (s surfaceMetrics) LimitCall(rule, result string) {
	s.m.limitCalls.WithLabelValues(rule, result).Inc()
}

func (m *metrics) fleet() fleet.Metrics { return fleetMetrics{m} }

type fleetMetrics struct{ m *metrics }

func (f fleetMetrics) Fallback(op string) { f.m.fleetFallback.WithLabelValues(op).Inc() }
func (f fleetMetrics) Replicas(n int)     { f.m.fleetReplicas.Set(float64(n)) }
func (f fleetMetrics) Shared(on bool) {
	if on {
		f.m.fleetShared.Set(1)
	} else {
		f.m.fleetShared.Set(0)
	}
}

type surfaceMetrics struct{ m *metrics }

func (s surfaceMetrics) Request(surface, method string, status int, d time.Duration) {
	c := s.m.requestSeries.get(requestKey{surface, method, status}, func(k requestKey) requestChildren {
		return requestChildren{s.m.requests.WithLabelValues(k.surface, k.method, strconv.Itoa(k.status)), s.m.requestTime.WithLabelValues(k.surface, k.method)}
	})
	c.count.Inc()
	c.time.Observe(d.Seconds())
}

func (s surfaceMetrics) AuthFailure(reason string) { s.m.authFailures.WithLabelValues(reason).Inc() }
func (s surfaceMetrics) InFlight(delta int)        { s.m.inFlight.Add(float64(delta)) }
func (s surfaceMetrics) RateLimited(kind string)   { s.m.rateLimited.WithLabelValues(kind).Inc() }
