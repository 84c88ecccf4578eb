package deploy_test

// These tests render the Helm chart in helm/mcp-gateway with the Helm Go SDK
// (the code path of `helm template`), for every value set in the chart's
// ci/ directory, and decode every object it renders strictly into the
// Kubernetes API types: an unknown or misplaced field, a duplicate key or
// a wrong type fails, as the API server's strict field validation would.
//
// Two Kubernetes versions are checked. This module builds against k8s.io/api
// v0.37 (Kubernetes 1.37); one module can hold one version of a module, so
// the renders are kept as golden files in testdata/rendered (this test fails
// when they differ from a fresh render; -update rewrites them) and the nested
// module kube136/ decodes the same files into k8s.io/api v0.36.

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/mcpgw/gateway/catalog"
)

var update = flag.Bool("update", false, "rewrite testdata/rendered from the chart")

const (
	chartDir = "helm/mcp-gateway"
	// releaseName makes the chart's names those of deploy/kubernetes.
	releaseName = "mcp-gateway"
	namespace   = "mcp-gateway"
	renderedDir = "testdata/rendered"
)

// strictDecoder decodes YAML or JSON into the typed objects of k8s.io/api
// and the Prometheus Operator, refusing unknown and duplicate fields.
var strictDecoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	if err := errors.Join(scheme.AddToScheme(s), monitoringv1.AddToScheme(s)); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}()

// rendered is one render of the chart: its objects by kind and name.
type rendered struct {
	manifest string
	objects  map[string]runtime.Object // "Kind/name"
}

func (r *rendered) get(t *testing.T, kind, name string) runtime.Object {
	t.Helper()
	o, ok := r.objects[kind+"/"+name]
	if !ok {
		t.Fatalf("the render has no %s %q; it has %v", kind, name, r.names())
	}
	return o
}

func (r *rendered) has(kind string) bool {
	for k := range r.objects {
		if strings.HasPrefix(k, kind+"/") {
			return true
		}
	}
	return false
}

func (r *rendered) names() []string {
	var out []string
	for k := range r.objects {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading the chart: %v", err)
	}
	return c
}

// render runs the chart as `helm template` does, with vals merged over the
// chart's values.yaml.
func render(t *testing.T, c *chart.Chart, vals map[string]any) (string, error) {
	t.Helper()
	install := action.NewInstall(&action.Configuration{})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.37.0", Major: "1", Minor: "37"}
	rel, err := install.Run(c, vals)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// decodeAll decodes every document of a manifest stream strictly.
func decodeAll(t *testing.T, source, manifest string) map[string]runtime.Object {
	t.Helper()
	objects := map[string]runtime.Object{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, gvk, err := strictDecoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: decoding strictly into the Kubernetes types: %v\n%s", source, err, doc)
		}
		name := obj.(interface{ GetName() string }).GetName()
		key := gvk.Kind + "/" + name
		if _, dup := objects[key]; dup {
			t.Fatalf("%s renders %s twice", source, key)
		}
		objects[key] = obj
	}
	return objects
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

// valueSets reads the chart's ci/*-values.yaml: name -> values.
func valueSets(t *testing.T) map[string]map[string]any {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no value sets in %s/ci (%v)", chartDir, err)
	}
	sets := map[string]map[string]any{}
	for _, p := range paths {
		vals, err := chartutil.ReadValuesFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sets[strings.TrimSuffix(filepath.Base(p), "-values.yaml")] = vals.AsMap()
	}
	return sets
}

// renderSet renders one ci/ value set, checks it against its golden file,
// and decodes it.
func renderSet(t *testing.T, name string) *rendered {
	t.Helper()
	sets := valueSets(t)
	vals, ok := sets[name]
	if !ok {
		t.Fatalf("no value set %s in %s/ci", name, chartDir)
	}
	manifest, err := render(t, loadChart(t), vals)
	if err != nil {
		t.Fatalf("rendering with ci/%s-values.yaml: %v", name, err)
	}
	golden := filepath.Join(renderedDir, name+".yaml")
	if *update {
		if err := os.MkdirAll(renderedDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestChart -update writes it)", err)
	}
	if string(want) != manifest {
		t.Errorf("%s differs from the chart's render with ci/%s-values.yaml; the kube136 module decodes the golden file, so rewrite it with go test -run TestChart -update", golden, name)
	}
	return &rendered{manifest: manifest, objects: decodeAll(t, "ci/"+name+"-values.yaml", manifest)}
}

// kustomize decodes deploy/kubernetes strictly into the same types.
func kustomize(t *testing.T) map[string]runtime.Object {
	t.Helper()
	all := map[string]runtime.Object{}
	for _, f := range []string{"configmap.yaml", "deployment.yaml", "service.yaml", "hpa.yaml", "pdb.yaml", exampleSecret} {
		for k, o := range decodeAll(t, "kubernetes/"+f, string(readFile(t, filepath.Join(manifestDir, f)))) {
			all[k] = o
		}
	}
	return all
}

func TestChartValueSetsRenderAndDecodeStrictly(t *testing.T) {
	sets := valueSets(t)
	for _, want := range []string{"default", "fleet", "existing-configmap", "redis-url", "redis-secret", "monitoring", "inline-catalog"} {
		if _, ok := sets[want]; !ok {
			t.Errorf("ci/%s-values.yaml is missing", want)
		}
	}
	for name := range sets {
		t.Run(name, func(t *testing.T) {
			r := renderSet(t, name)
			if len(r.objects) == 0 {
				t.Fatalf("rendered nothing")
			}
		})
	}
	// A golden file without a value set would be decoded by kube136 for
	// nothing.
	goldens, _ := filepath.Glob(filepath.Join(renderedDir, "*.yaml"))
	for _, g := range goldens {
		if _, ok := sets[strings.TrimSuffix(filepath.Base(g), ".yaml")]; !ok {
			t.Errorf("%s has no value set in %s/ci", g, chartDir)
		}
	}
}

// TestChartDeploymentMatchesKustomize checks that the chart's defaults run
// the container exactly as deploy/kubernetes does: the labels differ (the
// chart adds the release), the rest should not.
func TestChartDeploymentMatchesKustomize(t *testing.T) {
	k := kustomize(t)
	want := k["Deployment/mcp-gateway"].(*appsv1.Deployment)
	for _, set := range []string{"default", "fleet"} {
		t.Run(set, func(t *testing.T) {
			r := renderSet(t, set)
			got := r.get(t, "Deployment", "mcp-gateway").(*appsv1.Deployment)
			gp, wp := got.Spec.Template.Spec, want.Spec.Template.Spec
			gc, wc := gp.Containers[0], wp.Containers[0]
			for _, f := range []struct {
				name      string
				got, want any
			}{
				{"container name", gc.Name, wc.Name},
				{"image", gc.Image, wc.Image},
				{"imagePullPolicy", gc.ImagePullPolicy, wc.ImagePullPolicy},
				{"args", gc.Args, wc.Args},
				{"ports", gc.Ports, wc.Ports},
				{"env", gc.Env, wc.Env},
				{"resources", gc.Resources, wc.Resources},
				{"container securityContext", gc.SecurityContext, wc.SecurityContext},
				{"startupProbe", gc.StartupProbe, wc.StartupProbe},
				{"livenessProbe", gc.LivenessProbe, wc.LivenessProbe},
				{"readinessProbe", gc.ReadinessProbe, wc.ReadinessProbe},
				{"lifecycle", gc.Lifecycle, wc.Lifecycle},
				{"volumeMounts", gc.VolumeMounts, wc.VolumeMounts},
				{"volumes", gp.Volumes, wp.Volumes},
				{"pod securityContext", gp.SecurityContext, wp.SecurityContext},
				{"automountServiceAccountToken", gp.AutomountServiceAccountToken, wp.AutomountServiceAccountToken},
				{"enableServiceLinks", gp.EnableServiceLinks, wp.EnableServiceLinks},
				{"terminationGracePeriodSeconds", gp.TerminationGracePeriodSeconds, wp.TerminationGracePeriodSeconds},
				{"strategy", got.Spec.Strategy, want.Spec.Strategy},
				{"revisionHistoryLimit", got.Spec.RevisionHistoryLimit, want.Spec.RevisionHistoryLimit},
				{"prometheus annotations", promAnnotations(got.Spec.Template.Annotations), promAnnotations(want.Spec.Template.Annotations)},
				{"topology spread (keys)", spreadKeys(gp.TopologySpreadConstraints), spreadKeys(wp.TopologySpreadConstraints)},
			} {
				if !equality.Semantic.DeepEqual(f.got, f.want) {
					t.Errorf("%s differs from deploy/kubernetes:\n chart:     %s\n kustomize: %s", f.name, show(f.got), show(f.want))
				}
			}
			// The chart's selectors may add labels, never drop or change one.
			labels := got.Spec.Template.Labels
			for _, sel := range append([]map[string]string{got.Spec.Selector.MatchLabels}, spreadSelectors(gp.TopologySpreadConstraints)...) {
				if len(sel) == 0 || !subset(sel, labels) {
					t.Errorf("selector %v does not select the pod labels %v", sel, labels)
				}
			}
			if !subset(want.Spec.Template.Labels, labels) {
				t.Errorf("pod labels %v lack the kustomize labels %v", labels, want.Spec.Template.Labels)
			}
			// The catalog ConfigMap is the kustomize one, byte for byte.
			cm := r.get(t, "ConfigMap", "mcp-gateway-catalog").(*corev1.ConfigMap)
			kcm := k["ConfigMap/mcp-gateway-catalog"].(*corev1.ConfigMap)
			if !reflect.DeepEqual(cm.Data, kcm.Data) {
				t.Errorf("the chart's example catalog (files/catalog.yaml) differs from deploy/kubernetes/configmap.yaml")
			}
		})
	}
}

func TestChartDefaults(t *testing.T) {
	r := renderSet(t, "default")
	d := r.get(t, "Deployment", "mcp-gateway").(*appsv1.Deployment)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1: without a shared approval store, approvals live in one process", d.Spec.Replicas)
	}
	for _, kind := range []string{"HorizontalPodAutoscaler", "PodDisruptionBudget", "NetworkPolicy", "ServiceMonitor", "PrometheusRule", "Secret"} {
		if r.has(kind) {
			t.Errorf("the defaults render a %s; it is opt-in (or, for a Secret, never rendered)", kind)
		}
	}
	sa := r.get(t, "ServiceAccount", "mcp-gateway").(*corev1.ServiceAccount)
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("ServiceAccount automountServiceAccountToken is not false")
	}
	if d.Spec.Template.Spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName = %q, want %q", d.Spec.Template.Spec.ServiceAccountName, sa.Name)
	}
	svc := r.get(t, "Service", "mcp-gateway").(*corev1.Service)
	ksvc := kustomize(t)["Service/mcp-gateway"].(*corev1.Service)
	if !equality.Semantic.DeepEqual(svc.Spec.Ports, ksvc.Spec.Ports) || svc.Spec.Type != ksvc.Spec.Type || svc.Spec.SessionAffinity != ksvc.Spec.SessionAffinity {
		t.Errorf("Service spec differs from deploy/kubernetes:\n chart:     %s\n kustomize: %s", show(svc.Spec), show(ksvc.Spec))
	}
	if !subset(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("Service selector %v does not select the pod labels %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	// The ConfigMap's catalog loads with exactly the environment the
	// Deployment sets (dummy values for the Secret's keys).
	cm := r.get(t, "ConfigMap", "mcp-gateway-catalog").(*corev1.ConfigMap)
	env := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "dummy-" + strings.ToLower(e.Name) + "-0123456789abcdef0123456789abcdef"
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		}
	}
	if _, err := catalog.Parse("chart catalog.yaml", []byte(cm.Data["catalog.yaml"]), &catalog.LoadOptions{
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}); err != nil {
		t.Errorf("catalog.Parse(chart catalog.yaml) = %v, want no error", err)
	}
}

func TestChartFleet(t *testing.T) {
	r := renderSet(t, "fleet")
	k := kustomize(t)
	d := r.get(t, "Deployment", "mcp-gateway").(*appsv1.Deployment)
	if d.Spec.Replicas != nil {
		t.Errorf("Deployment sets replicas = %d under an HPA; every upgrade would cut a scaled-out Deployment back", *d.Spec.Replicas)
	}
	h := r.get(t, "HorizontalPodAutoscaler", "mcp-gateway").(*autoscalingv2.HorizontalPodAutoscaler)
	kh := k["HorizontalPodAutoscaler/mcp-gateway"].(*autoscalingv2.HorizontalPodAutoscaler)
	if !equality.Semantic.DeepEqual(h.Spec, kh.Spec) {
		t.Errorf("HPA spec differs from deploy/kubernetes:\n chart:     %s\n kustomize: %s", show(h.Spec), show(kh.Spec))
	}
	p := r.get(t, "PodDisruptionBudget", "mcp-gateway").(*policyv1.PodDisruptionBudget)
	kp := k["PodDisruptionBudget/mcp-gateway"].(*policyv1.PodDisruptionBudget)
	if !equality.Semantic.DeepEqual(p.Spec.MinAvailable, kp.Spec.MinAvailable) || !equality.Semantic.DeepEqual(p.Spec.UnhealthyPodEvictionPolicy, kp.Spec.UnhealthyPodEvictionPolicy) {
		t.Errorf("PDB spec differs from deploy/kubernetes:\n chart:     %s\n kustomize: %s", show(p.Spec), show(kp.Spec))
	}
	if !subset(p.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("PDB selector %v does not select the pod labels %v", p.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	np := r.get(t, "NetworkPolicy", "mcp-gateway").(*networkingv1.NetworkPolicy)
	if !subset(np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels) || len(np.Spec.PodSelector.MatchLabels) == 0 {
		t.Errorf("NetworkPolicy podSelector %v does not select the pod labels %v", np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels)
	}
	var ports []string
	for _, in := range np.Spec.Ingress {
		for _, pt := range in.Ports {
			ports = append(ports, pt.Port.String())
		}
		if len(in.From) == 0 {
			t.Errorf("ingress to %v is open to every peer; the fleet values name who may connect", in.Ports)
		}
	}
	if !slices.Equal(ports, []string{"http", "metrics"}) {
		t.Errorf("NetworkPolicy admits ports %q, want the container's http and metrics", ports)
	}
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Fatalf("egress rules given but policyTypes = %v", np.Spec.PolicyTypes)
	}
	dns := false
	for _, e := range np.Spec.Egress {
		for _, pt := range e.Ports {
			if pt.Port != nil && pt.Port.IntValue() == 53 {
				dns = true
			}
		}
	}
	if !dns {
		t.Errorf("restricted egress without DNS: upstreams named by host could not be resolved")
	}
}

func TestChartExistingConfigMap(t *testing.T) {
	r := renderSet(t, "existing-configmap")
	if r.has("ConfigMap") {
		t.Errorf("the chart renders a ConfigMap though catalog.existingConfigMap names one: %v", r.names())
	}
	d := r.get(t, "Deployment", "mcp-gateway").(*appsv1.Deployment)
	c := d.Spec.Template.Spec.Containers[0]
	if v := d.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].ConfigMap == nil || v[0].ConfigMap.Name != "team-catalog" {
		t.Errorf("volumes = %s, want the ConfigMap team-catalog", show(v))
	}
	if got := flagValue(c.Args, "--catalog"); got != "/etc/gateway/tools.yaml" {
		t.Errorf("--catalog %s, want /etc/gateway/tools.yaml (the key the values name)", got)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].SubPath != "" || c.VolumeMounts[0].MountPath != "/etc/gateway" {
		t.Errorf("volumeMounts = %s, want the whole directory /etc/gateway without subPath", show(c.VolumeMounts))
	}
}

func TestChartInlineCatalog(t *testing.T) {
	r := renderSet(t, "inline-catalog")
	vals := valueSets(t)["inline-catalog"]
	want := vals["catalog"].(map[string]any)["content"].(string)
	cm := r.get(t, "ConfigMap", "mcp-gateway-catalog").(*corev1.ConfigMap)
	if got := cm.Data["catalog.yaml"]; got != want {
		t.Errorf("ConfigMap catalog.yaml =\n%s\nwant the values' catalog.content =\n%s", got, want)
	}
	secret := "dummy-jwt-secret-0123456789abcdef0123456789abcdef"
	if _, err := catalog.Parse("inline catalog.yaml", []byte(want), &catalog.LoadOptions{
		Getenv: func(k string) (string, bool) { return secret, k == "GATEWAY_JWT_SECRET" },
	}); err != nil {
		t.Errorf("catalog.Parse(inline catalog.yaml) = %v, want no error", err)
	}
}

func TestChartRedis(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want corev1.EnvVar
	}{
		{"redis-url", corev1.EnvVar{Name: "GATEWAY_APPROVAL_STORE", Value: "redis://redis.cache.svc.cluster.local:6379/0"}},
		{"redis-secret", corev1.EnvVar{Name: "GATEWAY_APPROVAL_STORE", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gateway-redis"}, Key: "url"}}}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			r := renderSet(t, tc.set)
			d := r.get(t, "Deployment", "mcp-gateway").(*appsv1.Deployment)
			env := d.Spec.Template.Spec.Containers[0].Env
			i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == tc.want.Name })
			if i < 0 {
				t.Fatalf("no %s in env %s", tc.want.Name, show(env))
			}
			if !equality.Semantic.DeepEqual(env[i], tc.want) {
				t.Errorf("env %s = %s, want %s", tc.want.Name, show(env[i]), show(tc.want))
			}
			// Sharing approvals between replicas needs shared sealing keys.
			if !slices.ContainsFunc(env, func(e corev1.EnvVar) bool {
				return e.Name == "GATEWAY_APPROVAL_KEYS" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
			}) {
				t.Errorf("the %s values share approvals but give no GATEWAY_APPROVAL_KEYS from a Secret", tc.set)
			}
		})
	}
}

func TestChartMonitoring(t *testing.T) {
	r := renderSet(t, "monitoring")
	sm := r.get(t, "ServiceMonitor", "mcp-gateway").(*monitoringv1.ServiceMonitor)
	svc := r.get(t, "Service", "mcp-gateway").(*corev1.Service)
	if !subset(sm.Spec.Selector.MatchLabels, svc.Labels) || len(sm.Spec.Selector.MatchLabels) == 0 {
		t.Errorf("ServiceMonitor selects %v, not the Service's labels %v", sm.Spec.Selector.MatchLabels, svc.Labels)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints = %s, want port metrics at /metrics", show(sm.Spec.Endpoints))
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "metrics" }) {
		t.Errorf("the Service has no port named metrics for the ServiceMonitor")
	}
	pr := r.get(t, "PrometheusRule", "mcp-gateway").(*monitoringv1.PrometheusRule)
	var alerts []string
	for _, g := range pr.Spec.Groups {
		for _, rule := range g.Rules {
			alerts = append(alerts, rule.Alert)
			if rule.Labels["severity"] == "" {
				t.Errorf("alert %s has no severity", rule.Alert)
			}
			if rule.For == nil || *rule.For == "" {
				t.Errorf("alert %s fires on one evaluation (no for)", rule.Alert)
			}
		}
	}
	want := []string{"MCPGatewayAuditFailing", "MCPGatewayUpstreamBreakerOpen", "MCPGatewayCatalogReloadFailed", "MCPGatewayRateLimitSaturated"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts = %q, want %q", alerts, want)
	}
}

// TestChartRefusesBrokenValues checks that values the API server would
// take but that break the gateway fail the render, saying what was wrong.
func TestChartRefusesBrokenValues(t *testing.T) {
	c := loadChart(t)
	for _, tc := range []struct {
		name string
		vals string
		want string
	}{
		{"catalog-twice", "catalog: {content: 'version: 1', existingConfigMap: other}", "catalog: set content or existingConfigMap, not both"},
		{"empty-catalog-key", "catalog: {key: ''}", "catalog.key"},
		{"secret-env-without-name", "secrets: {env: [{key: JWT}]}", "at '/secrets/env/0': missing property 'name'"},
		{"misspelt-value", "autoscaling: {enabeld: true}", "at '/autoscaling': additional properties 'enabeld' not allowed"},
		{"unknown-top-level-value", "replicas: 3", "additional properties 'replicas' not allowed"},
		{"env-name-not-a-variable", "secrets: {env: [{name: 'JWT SECRET'}]}", "at '/secrets/env/0/name'"},
		{"digest-not-sha256", "image: {digest: latest}", "at '/image/digest'"},
		{"threshold-not-a-share", "prometheusRule: {limitSaturation: {threshold: 10}}", "at '/prometheusRule/limitSaturation/threshold'"},
		{"redis-twice", "redis: {url: 'redis://r:6379/0', existingSecret: r}", "redis: set url or existingSecret, not both"},
		{"redis-url-not-redis", "redis: {url: 'http://r:6379'}", "want redis://host:port/db"},
		{"redis-password-inline", "redis: {url: 'redis://:hunter2@r:6379/0'}", "redis.url carries credentials"},
		{"redis-without-env", "redis: {url: 'redis://r:6379/0', env: []}", "redis.env"},
		{"hpa-min-above-max", "autoscaling: {enabled: true, minReplicas: 5, maxReplicas: 3}", "minReplicas 5 is above maxReplicas 3"},
		{"pdb-blocks-drains", "podDisruptionBudget: {enabled: true, minAvailable: 1}", "podDisruptionBudget.minAvailable 1 with as few as 1 replicas"},
		{"pdb-at-hpa-min", "autoscaling: {enabled: true, minReplicas: 2}\npodDisruptionBudget: {enabled: true, minAvailable: 2}", "with as few as 2 replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := map[string]any{}
			if err := yaml.Unmarshal([]byte(tc.vals), &vals); err != nil {
				t.Fatal(err)
			}
			_, err := render(t, c, vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render(%s) = %v, want an error containing %q", tc.vals, err, tc.want)
			}
		})
	}
}

// TestChartRefusesKubernetesBeforeSleepHooks: the preStop sleep action
// needs Kubernetes 1.30, and Chart.yaml's kubeVersion says so.
func TestChartRefusesKubernetesBeforeSleepHooks(t *testing.T) {
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = releaseName, namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.29.0", Major: "1", Minor: "29"}
	if _, err := install.Run(loadChart(t), nil); err == nil || !strings.Contains(err.Error(), "kubeVersion") {
		t.Errorf("render for Kubernetes 1.29 = %v, want the chart's kubeVersion refusal", err)
	}
}

// TestStrictDecoderRefuses keeps the strict decoding honest: a misspelt
// field, a duplicate key and a wrong type must fail.
func TestStrictDecoderRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown-field", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {sessionAfinity: None}\n", `unknown field "spec.sessionAfinity"`},
		{"duplicate-key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: one}\ndata: {b: two}\n", `"data" already set`},
		{"wrong-type", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: three}\n", "cannot unmarshal string"},
		{"operator-field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\nspec: {endpoints: [{prot: metrics}]}\n", `unknown field "spec.endpoints[0].prot"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := strictDecoder.Decode([]byte(tc.doc), nil, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode = %v, want an error containing %s", err, tc.want)
			}
		})
	}
}

// TestKustomizeDecodesStrictly decodes deploy/kubernetes into the real
// types too (manifests_test.go checks it with structs of its own).
func TestKustomizeDecodesStrictly(t *testing.T) {
	if objs := kustomize(t); len(objs) != 6 {
		t.Errorf("decoded %d objects from deploy/kubernetes, want 6", len(objs))
	}
}

// ---- helpers ----

func promAnnotations(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if strings.HasPrefix(k, "prometheus.io/") {
			out[k] = v
		}
	}
	return out
}

// spreadKeys is a topology spread without its label selector.
func spreadKeys(cs []corev1.TopologySpreadConstraint) []corev1.TopologySpreadConstraint {
	out := slices.Clone(cs)
	for i := range out {
		out[i].LabelSelector = nil
	}
	return out
}

func spreadSelectors(cs []corev1.TopologySpreadConstraint) []map[string]string {
	var out []map[string]string
	for _, c := range cs {
		if c.LabelSelector != nil {
			out = append(out, c.LabelSelector.MatchLabels)
		}
	}
	return out
}

func show(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}
