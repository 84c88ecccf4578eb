package deploy_test

// The chart's alerts are evaluated by Prometheus' own rule engine:
// `promtool test rules` feeds series shaped like the gateway's and checks
// that each alert fires on its condition, for the pod or upstream at
// fault, and stays silent on a healthy fleet. promtool comes with
// Debian's prometheus package, which scripts/test.sh installs.

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// alertTests are promtool unit tests of the rendered rules. Series carry
// the namespace and job the rules select (this release's) and the pod a
// scrape adds; one minute per sample.
const alertTests = `rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
  - name: audit-failure-on-one-pod
    interval: 1m
    input_series:
      - series: 'gateway_audit_failures_total{namespace="mcp-gateway",job="mcp-gateway",pod="a"}'
        values: '0 0 0 1 1 1 1 1'
      - series: 'gateway_audit_healthy{namespace="mcp-gateway",job="mcp-gateway",pod="a"}'
        values: '1 1 1 0 0 0 0 0'
      - series: 'gateway_audit_failures_total{namespace="mcp-gateway",job="mcp-gateway",pod="b"}'
        values: '0x8'
      - series: 'gateway_audit_healthy{namespace="mcp-gateway",job="mcp-gateway",pod="b"}'
        values: '1x8'
    alert_rule_test:
      - eval_time: 2m
        alertname: MCPGatewayAuditFailing
        exp_alerts: []
      - eval_time: 6m
        alertname: MCPGatewayAuditFailing
        exp_alerts:
          - exp_labels: { severity: critical, namespace: mcp-gateway, pod: a }

  - name: upstream-breaker-open
    interval: 1m
    input_series:
      # monitor: its breaker opens at minute 3 and stays open.
      - series: 'gateway_upstream_breaker_open{namespace="mcp-gateway",job="mcp-gateway",pod="a",upstream="monitor"}'
        values: '0 0 0 1 1 1 1 1 1 1'
      # operator: one workspace's breaker is open, the upstream's is not.
      - series: 'gateway_upstream_breaker_open{namespace="mcp-gateway",job="mcp-gateway",pod="a",upstream="operator"}'
        values: '0x10'
      - series: 'gateway_upstream_workspace_breakers_open{namespace="mcp-gateway",job="mcp-gateway",pod="a",upstream="operator"}'
        values: '1x10'
    alert_rule_test:
      - eval_time: 4m
        alertname: MCPGatewayUpstreamBreakerOpen
        exp_alerts: []
      - eval_time: 8m
        alertname: MCPGatewayUpstreamBreakerOpen
        exp_alerts:
          - exp_labels: { severity: warning, namespace: mcp-gateway, pod: a, upstream: monitor }

  - name: catalog-reload-failed
    interval: 1m
    input_series:
      - series: 'gateway_catalog_last_reload_success{namespace="mcp-gateway",job="mcp-gateway",pod="a"}'
        values: '1 1 0 0 0 0 0 0 0 0'
      - series: 'gateway_catalog_last_reload_success{namespace="mcp-gateway",job="mcp-gateway",pod="b"}'
        values: '1x10'
    alert_rule_test:
      - eval_time: 4m
        alertname: MCPGatewayCatalogReloadFailed
        exp_alerts: []
      - eval_time: 9m
        alertname: MCPGatewayCatalogReloadFailed
        exp_alerts:
          - exp_labels: { severity: warning, namespace: mcp-gateway, pod: a }

  - name: rate-limits-refuse-a-sixth-of-calls
    interval: 1m
    input_series:
      - series: 'gateway_rate_limited_total{namespace="mcp-gateway",job="mcp-gateway",pod="a",kind="principal"}'
        values: '0+20x30'
      - series: 'gateway_tool_calls_total{namespace="mcp-gateway",job="mcp-gateway",pod="a",tool="get_job",outcome="ok"}'
        values: '0+100x30'
    alert_rule_test:
      - eval_time: 25m
        alertname: MCPGatewayRateLimitSaturated
        exp_alerts:
          - exp_labels: { severity: warning, namespace: mcp-gateway }

  - name: healthy-fleet-is-quiet
    interval: 1m
    input_series:
      - series: 'gateway_audit_failures_total{namespace="mcp-gateway",job="mcp-gateway",pod="a"}'
        values: '0x30'
      - series: 'gateway_audit_healthy{namespace="mcp-gateway",job="mcp-gateway",pod="a"}'
        values: '1x30'
      - series: 'gateway_upstream_responses_total{namespace="mcp-gateway",job="mcp-gateway",pod="a",upstream="monitor",class="2xx"}'
        values: '0+50x30'
      - series: 'gateway_upstream_breaker_open{namespace="mcp-gateway",job="mcp-gateway",pod="a",upstream="monitor"}'
        values: '0x30'
      - series: 'gateway_catalog_last_reload_success{namespace="mcp-gateway",job="mcp-gateway",pod="a"}'
        values: '1x30'
      - series: 'gateway_rate_limited_total{namespace="mcp-gateway",job="mcp-gateway",pod="a",kind="principal"}'
        values: '0+1x30'
      - series: 'gateway_tool_calls_total{namespace="mcp-gateway",job="mcp-gateway",pod="a",tool="get_job",outcome="ok"}'
        values: '0+100x30'
    alert_rule_test:
      - { eval_time: 25m, alertname: MCPGatewayAuditFailing, exp_alerts: [] }
      - { eval_time: 25m, alertname: MCPGatewayUpstreamBreakerOpen, exp_alerts: [] }
      - { eval_time: 25m, alertname: MCPGatewayCatalogReloadFailed, exp_alerts: [] }
      - { eval_time: 25m, alertname: MCPGatewayRateLimitSaturated, exp_alerts: [] }
`

func TestAlertsFireOnTheirCondition(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("promtool is missing (apt-get install prometheus): %v", err)
		}
		t.Skip("promtool is missing; apt-get install prometheus")
	}
	r := renderSet(t, "monitoring")
	pr := r.get(t, "PrometheusRule", "mcp-gateway").(*monitoringv1.PrometheusRule)
	spec := pr.Spec.DeepCopy()
	// The descriptions are templates over the alert's labels; these tests
	// are about when the alerts fire, so they compare labels only.
	for g := range spec.Groups {
		for i := range spec.Groups[g].Rules {
			spec.Groups[g].Rules[i].Annotations = nil
		}
	}
	rules, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"rules.yaml": rules, "tests.yaml": []byte(alertTests)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := exec.Command(promtool, "check", "rules", "rules.yaml")
	check.Dir = dir
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, rules)
	}
	test := exec.Command(promtool, "test", "rules", "tests.yaml")
	test.Dir = dir
	if out, err := test.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
