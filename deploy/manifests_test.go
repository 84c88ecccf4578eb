package deploy_test

// These tests read the Kubernetes manifests and the Dockerfile as text and
// check what the gateway needs from them, with no cluster, no Docker and no
// network.
//
// Each manifest is decoded with yaml.v3 and KnownFields(true) into the small
// structs below, which mirror the Kubernetes API for the fields these
// manifests use, so a misspelled or misplaced field fails here instead of
// being dropped by a lenient decoder (or rejected by the API server at
// deploy time). Field names match case-sensitively, like the API server.
// Using a valid Kubernetes field that is not modelled yet fails too: add it
// to the struct, spelled as in the API reference. (k8s.io/api would give
// the whole API, but it brings about twenty modules into go.mod and raises
// versions the gateway binary itself builds with.)

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpgw/gateway/catalog"
)

const (
	manifestDir = "kubernetes"
	dockerfile  = "../Dockerfile"
	// drainSeconds is how long serve lets in-flight calls finish after
	// SIGTERM (cmd/gateway shutdownGrace).
	drainSeconds = 25
	// exampleSecret is deliberately left out of kustomization.yaml.
	exampleSecret = "secret.example.yaml"
)

// ---- the Kubernetes API, for the fields these manifests use ----

type objectMeta struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

// intOrString is Kubernetes' IntOrString: a port number or name, a count
// or a percentage.
type intOrString struct {
	Int   int
	Str   string
	IsStr bool
}

func (v *intOrString) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want an integer or a string", n.Line)
	}
	switch n.ShortTag() {
	case "!!int":
		i, err := strconv.Atoi(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		*v = intOrString{Int: i}
	case "!!str":
		*v = intOrString{Str: n.Value, IsStr: true}
	default:
		return fmt.Errorf("line %d: %s is neither an integer nor a string", n.Line, n.ShortTag())
	}
	return nil
}

type deployment struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   objectMeta     `yaml:"metadata"`
	Spec       deploymentSpec `yaml:"spec"`
}

type deploymentSpec struct {
	Replicas             *int32        `yaml:"replicas"`
	RevisionHistoryLimit *int32        `yaml:"revisionHistoryLimit"`
	Selector             labelSelector `yaml:"selector"`
	Strategy             struct {
		Type          string `yaml:"type"`
		RollingUpdate struct {
			MaxUnavailable intOrString `yaml:"maxUnavailable"`
			MaxSurge       intOrString `yaml:"maxSurge"`
		} `yaml:"rollingUpdate"`
	} `yaml:"strategy"`
	Template struct {
		Metadata objectMeta `yaml:"metadata"`
		Spec     podSpec    `yaml:"spec"`
	} `yaml:"template"`
}

type podSpec struct {
	AutomountServiceAccountToken  *bool                      `yaml:"automountServiceAccountToken"`
	EnableServiceLinks            *bool                      `yaml:"enableServiceLinks"`
	TerminationGracePeriodSeconds *int64                     `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               podSecurityContext         `yaml:"securityContext"`
	TopologySpreadConstraints     []topologySpreadConstraint `yaml:"topologySpreadConstraints"`
	Containers                    []container                `yaml:"containers"`
	Volumes                       []volume                   `yaml:"volumes"`
}

type podSecurityContext struct {
	RunAsNonRoot   *bool           `yaml:"runAsNonRoot"`
	RunAsUser      *int64          `yaml:"runAsUser"`
	RunAsGroup     *int64          `yaml:"runAsGroup"`
	SeccompProfile *seccompProfile `yaml:"seccompProfile"`
}

type seccompProfile struct {
	Type string `yaml:"type"`
}

type topologySpreadConstraint struct {
	MaxSkew           int32         `yaml:"maxSkew"`
	TopologyKey       string        `yaml:"topologyKey"`
	WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
	LabelSelector     labelSelector `yaml:"labelSelector"`
	MatchLabelKeys    []string      `yaml:"matchLabelKeys"`
}

type container struct {
	Name            string                   `yaml:"name"`
	Image           string                   `yaml:"image"`
	ImagePullPolicy string                   `yaml:"imagePullPolicy"`
	Args            []string                 `yaml:"args"`
	Ports           []containerPort          `yaml:"ports"`
	Env             []envVar                 `yaml:"env"`
	Resources       resources                `yaml:"resources"`
	SecurityContext containerSecurityContext `yaml:"securityContext"`
	StartupProbe    *probe                   `yaml:"startupProbe"`
	LivenessProbe   *probe                   `yaml:"livenessProbe"`
	ReadinessProbe  *probe                   `yaml:"readinessProbe"`
	Lifecycle       struct {
		PreStop *struct {
			Sleep *struct {
				Seconds int64 `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	VolumeMounts []volumeMount `yaml:"volumeMounts"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int32  `yaml:"containerPort"`
	Protocol      string `yaml:"protocol"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type resources struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits"`
}

type containerSecurityContext struct {
	RunAsNonRoot             *bool           `yaml:"runAsNonRoot"`
	RunAsUser                *int64          `yaml:"runAsUser"`
	ReadOnlyRootFilesystem   *bool           `yaml:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool           `yaml:"allowPrivilegeEscalation"`
	SeccompProfile           *seccompProfile `yaml:"seccompProfile"`
	Capabilities             struct {
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
}

type probe struct {
	HTTPGet *struct {
		Path string      `yaml:"path"`
		Port intOrString `yaml:"port"`
	} `yaml:"httpGet"`
	InitialDelaySeconds int32 `yaml:"initialDelaySeconds"`
	PeriodSeconds       int32 `yaml:"periodSeconds"`
	TimeoutSeconds      int32 `yaml:"timeoutSeconds"`
	FailureThreshold    int32 `yaml:"failureThreshold"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	SubPath   string `yaml:"subPath"`
	ReadOnly  bool   `yaml:"readOnly"`
}

type volume struct {
	Name      string `yaml:"name"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
}

type service struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       struct {
		Type            string            `yaml:"type"`
		SessionAffinity string            `yaml:"sessionAffinity"`
		Selector        map[string]string `yaml:"selector"`
		Ports           []struct {
			Name        string      `yaml:"name"`
			Port        int32       `yaml:"port"`
			TargetPort  intOrString `yaml:"targetPort"`
			Protocol    string      `yaml:"protocol"`
			AppProtocol string      `yaml:"appProtocol"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type configMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   objectMeta        `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

type secret struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   objectMeta        `yaml:"metadata"`
	Type       string            `yaml:"type"`
	StringData map[string]string `yaml:"stringData"`
}

type hpa struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       struct {
		ScaleTargetRef struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Name       string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicas *int32 `yaml:"minReplicas"`
		MaxReplicas int32  `yaml:"maxReplicas"`
		Metrics     []struct {
			Type     string `yaml:"type"`
			Resource *struct {
				Name   string `yaml:"name"`
				Target struct {
					Type               string `yaml:"type"`
					AverageUtilization *int32 `yaml:"averageUtilization"`
				} `yaml:"target"`
			} `yaml:"resource"`
		} `yaml:"metrics"`
		Behavior struct {
			ScaleUp   *scalingRules `yaml:"scaleUp"`
			ScaleDown *scalingRules `yaml:"scaleDown"`
		} `yaml:"behavior"`
	} `yaml:"spec"`
}

type scalingRules struct {
	StabilizationWindowSeconds *int32 `yaml:"stabilizationWindowSeconds"`
	SelectPolicy               string `yaml:"selectPolicy"`
	Policies                   []struct {
		Type          string `yaml:"type"`
		Value         int32  `yaml:"value"`
		PeriodSeconds int32  `yaml:"periodSeconds"`
	} `yaml:"policies"`
}

type pdb struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   objectMeta `yaml:"metadata"`
	Spec       struct {
		MinAvailable               *intOrString  `yaml:"minAvailable"`
		MaxUnavailable             *intOrString  `yaml:"maxUnavailable"`
		UnhealthyPodEvictionPolicy string        `yaml:"unhealthyPodEvictionPolicy"`
		Selector                   labelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

type kustomization struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Namespace  string   `yaml:"namespace"`
	Resources  []string `yaml:"resources"`
}

// manifests is every file under deploy/kubernetes, decoded.
type manifests struct {
	deployment    deployment
	service       service
	configMap     configMap
	secret        secret
	hpa           hpa
	pdb           pdb
	kustomization kustomization
}

func loadManifests(t *testing.T) *manifests {
	t.Helper()
	m := &manifests{}
	for _, f := range []struct {
		file, apiVersion, kind string
		out                    any
	}{
		{"deployment.yaml", "apps/v1", "Deployment", &m.deployment},
		{"service.yaml", "v1", "Service", &m.service},
		{"configmap.yaml", "v1", "ConfigMap", &m.configMap},
		{exampleSecret, "v1", "Secret", &m.secret},
		{"hpa.yaml", "autoscaling/v2", "HorizontalPodAutoscaler", &m.hpa},
		{"pdb.yaml", "policy/v1", "PodDisruptionBudget", &m.pdb},
		{"kustomization.yaml", "kustomize.config.k8s.io/v1beta1", "Kustomization", &m.kustomization},
	} {
		data := readFile(t, filepath.Join(manifestDir, f.file))
		decodeStrict(t, f.file, data, f.out)
		var head struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		if err := yaml.Unmarshal(data, &head); err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		if head.APIVersion != f.apiVersion || head.Kind != f.kind {
			t.Fatalf("%s is %s %s, want %s %s", f.file, head.APIVersion, head.Kind, f.apiVersion, f.kind)
		}
	}
	return m
}

// decodeStrict decodes the one YAML document in data into out, failing on
// unknown fields, duplicate keys, type mismatches and extra documents.
func decodeStrict(t *testing.T, file string, data []byte, out any) {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("%s holds more than one document (second Decode = %v); one object per file", file, err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// gateway returns the Deployment's one container.
func (m *manifests) gateway(t *testing.T) *container {
	t.Helper()
	cs := m.deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(cs))
	}
	return &cs[0]
}

// ---- tests ----

func TestKustomizationListsEveryManifest(t *testing.T) {
	m := loadManifests(t)
	paths, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range paths {
		if f := filepath.Base(p); f != "kustomization.yaml" && f != exampleSecret {
			want = append(want, f)
		}
	}
	got := slices.Clone(m.kustomization.Resources)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("kustomization resources = %q, want every manifest but the example Secret: %q", got, want)
	}
	if slices.Contains(got, exampleSecret) {
		t.Errorf("kustomization lists %s: its placeholder JWT secret would be deployed", exampleSecret)
	}
}

func TestDeploymentShape(t *testing.T) {
	m := loadManifests(t)
	d := m.deployment
	pod := d.Spec.Template
	if d.Spec.Replicas != nil {
		t.Errorf("Deployment sets replicas = %d; leave it to the HPA, or every apply resets a scaled-out Deployment", *d.Spec.Replicas)
	}
	if len(d.Spec.Selector.MatchLabels) == 0 || !subset(d.Spec.Selector.MatchLabels, pod.Metadata.Labels) {
		t.Errorf("selector %v does not select the pod labels %v", d.Spec.Selector.MatchLabels, pod.Metadata.Labels)
	}
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		t.Errorf("no topologySpreadConstraints: replicas may all land on one node")
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if !subset(c.LabelSelector.MatchLabels, pod.Metadata.Labels) || len(c.LabelSelector.MatchLabels) == 0 {
			t.Errorf("topology spread on %s selects %v, not the pod labels %v", c.TopologyKey, c.LabelSelector.MatchLabels, pod.Metadata.Labels)
		}
	}
	metrics := portNamed(t, m.gateway(t), "metrics")
	if a := pod.Metadata.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(int(metrics)) || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("prometheus annotations = %v, want scrape true on port %d at /metrics", a, metrics)
	}
}

func TestDeploymentArgsMatchPorts(t *testing.T) {
	m := loadManifests(t)
	c := m.gateway(t)
	for _, tc := range []struct{ flag, port string }{
		{"--listen", "http"},
		{"--metrics-listen", "metrics"},
	} {
		addr := flagValue(c.Args, tc.flag)
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Errorf("%s %q: %v", tc.flag, addr, err)
			continue
		}
		if want := strconv.Itoa(int(portNamed(t, c, tc.port))); port != want {
			t.Errorf("%s %q listens on %s, want container port %q (%s)", tc.flag, addr, port, tc.port, want)
		}
	}
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Errorf("args = %q, want serve first", c.Args)
	}
}

func TestDeploymentProbes(t *testing.T) {
	m := loadManifests(t)
	c := m.gateway(t)
	http := portNamed(t, c, "http")
	for _, tc := range []struct {
		name string
		p    *probe
		path string
	}{
		{"startupProbe", c.StartupProbe, "/healthz"},
		{"livenessProbe", c.LivenessProbe, "/healthz"},
		{"readinessProbe", c.ReadinessProbe, "/readyz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.p == nil || tc.p.HTTPGet == nil {
				t.Fatalf("%s is not an httpGet probe", tc.name)
			}
			if tc.p.HTTPGet.Path != tc.path {
				t.Errorf("%s path = %q, want %q", tc.name, tc.p.HTTPGet.Path, tc.path)
			}
			if got := resolvePort(t, c, tc.p.HTTPGet.Port); got != http {
				t.Errorf("%s port = %d, want the http container port %d", tc.name, got, http)
			}
		})
	}
}

func TestDeploymentSecurity(t *testing.T) {
	m := loadManifests(t)
	pod := m.deployment.Spec.Template.Spec
	sc := m.gateway(t).SecurityContext
	if !isTrue(pod.SecurityContext.RunAsNonRoot) && !isTrue(sc.RunAsNonRoot) {
		t.Errorf("runAsNonRoot is not set on the pod or the container")
	}
	uid := pod.SecurityContext.RunAsUser
	if sc.RunAsUser != nil {
		uid = sc.RunAsUser
	}
	if uid != nil && *uid == 0 {
		t.Errorf("runAsUser = 0, want a non-root uid")
	}
	if !isTrue(sc.ReadOnlyRootFilesystem) {
		t.Errorf("readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("allowPrivilegeEscalation is not false")
	}
	if !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("capabilities.drop = %q, want [ALL]", sc.Capabilities.Drop)
	}
	seccomp := pod.SecurityContext.SeccompProfile
	if sc.SeccompProfile != nil {
		seccomp = sc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != "RuntimeDefault" {
		t.Errorf("seccompProfile = %v, want RuntimeDefault", seccomp)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken is not false; the gateway never calls the Kubernetes API")
	}
}

func TestDeploymentOutlivesDrain(t *testing.T) {
	m := loadManifests(t)
	grace := m.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil {
		t.Fatalf("terminationGracePeriodSeconds unset (default 30)")
	}
	// The grace period counts from the start of the preStop hook.
	need := int64(drainSeconds)
	if ps := m.gateway(t).Lifecycle.PreStop; ps != nil && ps.Sleep != nil {
		need += ps.Sleep.Seconds
	}
	if *grace <= need {
		t.Errorf("terminationGracePeriodSeconds = %d, want more than %d (preStop sleep + %d s drain)", *grace, need, drainSeconds)
	}
}

func TestDeploymentResources(t *testing.T) {
	m := loadManifests(t)
	c := m.gateway(t)
	for _, tc := range []struct {
		name  string
		parse func(string) (int64, error)
	}{
		{"cpu", parseMillicores},
		{"memory", parseBytes},
	} {
		req, lim := c.Resources.Requests[tc.name], c.Resources.Limits[tc.name]
		if req == "" || lim == "" {
			t.Errorf("%s request %q, limit %q: want both", tc.name, req, lim)
			continue
		}
		r, err1 := tc.parse(req)
		l, err2 := tc.parse(lim)
		if err := errors.Join(err1, err2); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r <= 0 || r > l {
			t.Errorf("%s request %s, limit %s: want 0 < request <= limit", tc.name, req, lim)
		}
	}
	if v, ok := envValue(c, "GOMEMLIMIT"); ok {
		soft, err1 := parseBytes(v)
		hard, err2 := parseBytes(c.Resources.Limits["memory"])
		if err := errors.Join(err1, err2); err != nil || soft >= hard {
			t.Errorf("GOMEMLIMIT %s, memory limit %s: want the soft limit below the hard one (%v)", v, c.Resources.Limits["memory"], err)
		}
	}
}

// TestCatalogMount checks that --catalog names the ConfigMap's key inside a
// whole-directory mount: a subPath mount never sees ConfigMap updates, so
// the gateway could not reload.
func TestCatalogMount(t *testing.T) {
	m := loadManifests(t)
	c := m.gateway(t)
	path := flagValue(c.Args, "--catalog")
	dir, key := filepath.Dir(path), filepath.Base(path)
	var mount *volumeMount
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == dir {
			mount = &c.VolumeMounts[i]
		}
	}
	if mount == nil {
		t.Fatalf("no volume mounted at %s, the directory of --catalog %s", dir, path)
	}
	if mount.SubPath != "" {
		t.Errorf("catalog mounted with subPath %q: ConfigMap updates would never reach the file", mount.SubPath)
	}
	var cm string
	for _, v := range m.deployment.Spec.Template.Spec.Volumes {
		if v.Name == mount.Name && v.ConfigMap != nil {
			cm = v.ConfigMap.Name
		}
	}
	if cm != m.configMap.Metadata.Name {
		t.Errorf("volume %q is ConfigMap %q, want %q", mount.Name, cm, m.configMap.Metadata.Name)
	}
	if _, ok := m.configMap.Data[key]; !ok {
		t.Errorf("ConfigMap %q has no key %q (--catalog %s)", cm, key, path)
	}
}

// TestConfigMapCatalogLoads loads the ConfigMap's catalog with exactly the
// environment the Deployment gives the container (dummy values for the
// Secret's keys), so a ${VAR} the Deployment does not set fails here.
func TestConfigMapCatalogLoads(t *testing.T) {
	m := loadManifests(t)
	c := m.gateway(t)
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != m.secret.Metadata.Name {
				t.Errorf("env %s comes from Secret %q, want %q", e.Name, ref.Name, m.secret.Metadata.Name)
			}
			if _, ok := m.secret.StringData[ref.Key]; !ok {
				t.Errorf("env %s reads key %q, which %s does not show", e.Name, ref.Key, exampleSecret)
			}
			env[e.Name] = "dummy-" + strings.ToLower(e.Name) + "-0123456789abcdef0123456789abcdef"
		case e.ValueFrom != nil:
			t.Errorf("env %s: only secretKeyRef is modelled", e.Name)
		default:
			env[e.Name] = e.Value
		}
	}
	data := m.configMap.Data["catalog.yaml"]
	if data == "" {
		t.Fatalf("ConfigMap has no catalog.yaml")
	}
	cat, err := catalog.Parse("configmap catalog.yaml", []byte(data), &catalog.LoadOptions{
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if err != nil {
		t.Fatalf("catalog.Parse(configmap catalog.yaml) = %v, want no error", err)
	}
	if len(cat.Warnings) > 0 {
		t.Errorf("catalog warnings: %q", cat.Warnings)
	}
	if len(cat.Tools) == 0 {
		t.Errorf("catalog has no enabled tools")
	}
	if j := cat.Auth.JWT; j != nil && j.HMACSecretEnv != "" {
		if _, ok := env[j.HMACSecretEnv]; !ok {
			t.Errorf("auth.jwt.hmac_secret_env names %s, which the Deployment does not set", j.HMACSecretEnv)
		}
	}
}

func TestServiceSelectsGatewayPods(t *testing.T) {
	m := loadManifests(t)
	s := m.service.Spec
	labels := m.deployment.Spec.Template.Metadata.Labels
	if len(s.Selector) == 0 || !subset(s.Selector, labels) {
		t.Errorf("Service selector %v does not select the pod labels %v", s.Selector, labels)
	}
	if s.Type != "" && s.Type != "ClusterIP" {
		t.Errorf("Service type = %q, want ClusterIP", s.Type)
	}
	if s.SessionAffinity != "" && s.SessionAffinity != "None" {
		t.Errorf("sessionAffinity = %q: the gateway is stateless, sticky sessions only unbalance it", s.SessionAffinity)
	}
	c := m.gateway(t)
	want := map[string]struct{ port, target int32 }{
		"http":    {80, portNamed(t, c, "http")},
		"metrics": {portNamed(t, c, "metrics"), portNamed(t, c, "metrics")},
	}
	for _, p := range s.Ports {
		w, ok := want[p.Name]
		if !ok {
			continue
		}
		delete(want, p.Name)
		if got := resolvePort(t, c, p.TargetPort); p.Port != w.port || got != w.target {
			t.Errorf("Service port %s = %d -> %d, want %d -> %d", p.Name, p.Port, got, w.port, w.target)
		}
	}
	for name := range want {
		t.Errorf("Service has no port named %s", name)
	}
}

func TestHPATargetsDeployment(t *testing.T) {
	m := loadManifests(t)
	h := m.hpa.Spec
	if r := h.ScaleTargetRef; r.APIVersion != "apps/v1" || r.Kind != "Deployment" || r.Name != m.deployment.Metadata.Name {
		t.Errorf("scaleTargetRef = %+v, want apps/v1 Deployment %q", r, m.deployment.Metadata.Name)
	}
	if h.MinReplicas == nil || *h.MinReplicas < 3 || h.MaxReplicas < *h.MinReplicas {
		t.Errorf("replicas %d..%d, want at least 3 and min <= max", deref(h.MinReplicas), h.MaxReplicas)
	}
	cpu := false
	for _, mt := range h.Metrics {
		if mt.Type == "Resource" && mt.Resource != nil && mt.Resource.Name == "cpu" &&
			mt.Resource.Target.Type == "Utilization" && mt.Resource.Target.AverageUtilization != nil {
			cpu = true
		}
	}
	if !cpu {
		t.Errorf("no CPU utilization metric")
	}
	if _, ok := m.gateway(t).Resources.Requests["cpu"]; !ok {
		t.Errorf("CPU utilization needs a CPU request on the container")
	}
	if sd := h.Behavior.ScaleDown; sd == nil || sd.StabilizationWindowSeconds == nil || *sd.StabilizationWindowSeconds <= 0 {
		t.Errorf("no scaleDown stabilization window")
	}
}

func TestPDBKeepsReplicasServing(t *testing.T) {
	m := loadManifests(t)
	p := m.pdb.Spec
	labels := m.deployment.Spec.Template.Metadata.Labels
	if len(p.Selector.MatchLabels) == 0 || !subset(p.Selector.MatchLabels, labels) {
		t.Errorf("PDB selector %v does not select the pod labels %v", p.Selector.MatchLabels, labels)
	}
	if p.MinAvailable == nil || p.MinAvailable.IsStr {
		t.Fatalf("minAvailable = %v, want a count", p.MinAvailable)
	}
	// At least one pod must stay evictable, or a node drain blocks forever.
	lo := int(deref(m.hpa.Spec.MinReplicas))
	if p.MinAvailable.Int < 1 || p.MinAvailable.Int >= lo {
		t.Errorf("minAvailable = %d with minReplicas %d: want 1 <= minAvailable < minReplicas", p.MinAvailable.Int, lo)
	}
}

// TestDockerfile checks the final stage: a base with no shell or package
// manager, a numeric non-root USER (a kubelet enforcing runAsNonRoot cannot
// check a user name), the bundled catalog where CMD looks for it, and the
// ports the manifests use.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, string(readFile(t, dockerfile)))
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stage(s), want a builder and a final stage", len(stages))
	}
	final := stages[len(stages)-1]
	base := final.from
	if !strings.HasPrefix(base, "gcr.io/distroless/") && base != "scratch" {
		t.Errorf("final stage FROM %s, want distroless or scratch", base)
	}
	user := final.last("USER")
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("final stage USER %q, want a numeric non-root uid", user)
	}
	if hc := final.last("HEALTHCHECK"); hc != "" && !strings.EqualFold(hc, "NONE") {
		t.Errorf("HEALTHCHECK %q: the final image has no shell to run it", hc)
	}
	if ep := final.last("ENTRYPOINT"); ep != `["/gateway"]` {
		t.Errorf("ENTRYPOINT %s, want [\"/gateway\"]", ep)
	}
	var cmd []string
	if err := yaml.Unmarshal([]byte(final.last("CMD")), &cmd); err != nil || len(cmd) == 0 || cmd[0] != "serve" {
		t.Fatalf("CMD %s, want exec form starting with serve (%v)", final.last("CMD"), err)
	}
	catalogPath := flagValue(cmd, "--catalog")
	copied := false
	for _, c := range final.all("COPY") {
		if f := strings.Fields(c); len(f) > 0 && f[len(f)-1] == catalogPath {
			copied = true
		}
	}
	if !copied {
		t.Errorf("CMD reads --catalog %s, which no COPY in the final stage writes", catalogPath)
	}
	exposed := strings.Fields(strings.Join(final.all("EXPOSE"), " "))
	for _, p := range []string{"8080", "9464"} {
		if !slices.Contains(exposed, p) {
			t.Errorf("EXPOSE %q lacks %s", exposed, p)
		}
	}
}

// ---- helpers ----

type stage struct {
	from  string
	instr [][2]string // instruction (upper case), arguments
}

func (s *stage) all(instr string) []string {
	var out []string
	for _, in := range s.instr {
		if in[0] == instr {
			out = append(out, in[1])
		}
	}
	return out
}

func (s *stage) last(instr string) string {
	all := s.all(instr)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

// parseDockerfile splits a Dockerfile into stages: comments dropped,
// continuation lines joined, FROM flags (--platform) skipped.
func parseDockerfile(t *testing.T, text string) []*stage {
	t.Helper()
	var stages []*stage
	var logical strings.Builder
	flush := func() {
		line := strings.TrimSpace(logical.String())
		logical.Reset()
		if line == "" {
			return
		}
		instr, args, _ := strings.Cut(line, " ")
		instr, args = strings.ToUpper(instr), strings.TrimSpace(args)
		if instr == "FROM" {
			f := strings.Fields(args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				f = f[1:]
			}
			if len(f) == 0 {
				t.Fatalf("FROM without an image: %q", line)
			}
			stages = append(stages, &stage{from: f[0]})
			return
		}
		if len(stages) > 0 {
			stages[len(stages)-1].instr = append(stages[len(stages)-1].instr, [2]string{instr, args})
		}
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			logical.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		logical.WriteString(trimmed)
		flush()
	}
	flush()
	return stages
}

func subset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return true
}

func isTrue(b *bool) bool { return b != nil && *b }

// deref returns *p, or zero for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// flagValue returns the value after flag in args ("--flag v" or "--flag=v").
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

func envValue(c *container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom == nil {
			return e.Value, true
		}
	}
	return "", false
}

func portNamed(t *testing.T, c *container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %q", c.Name, name)
	return 0
}

// resolvePort turns a port name or number into a container port number.
func resolvePort(t *testing.T, c *container, p intOrString) int32 {
	t.Helper()
	if p.IsStr {
		return portNamed(t, c, p.Str)
	}
	return int32(p.Int)
}

// parseMillicores parses a Kubernetes CPU quantity: "100m", "1", "0.5".
func parseMillicores(s string) (int64, error) {
	if v, ok := strings.CutSuffix(s, "m"); ok {
		return strconv.ParseInt(v, 10, 64)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("cpu quantity %q: %v", s, err)
	}
	return int64(f * 1000), nil
}

// parseBytes parses a binary-suffixed size in the Kubernetes form ("512Mi")
// or Go's GOMEMLIMIT form ("460MiB"), or plain bytes.
func parseBytes(s string) (int64, error) {
	for i, suffix := range []string{"Ki", "Mi", "Gi", "Ti"} {
		for _, form := range []string{suffix + "B", suffix} {
			if v, ok := strings.CutSuffix(s, form); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("size %q: %v", s, err)
				}
				return n << (10 * (i + 1)), nil
			}
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	return n, nil
}
