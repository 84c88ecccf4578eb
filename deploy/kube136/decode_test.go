// Package kube136 decodes the chart's renders and the kustomize manifests
// strictly into the types of Kubernetes 1.36 (k8s.io/api v0.36).
//
// It is a module of its own because a module holds one version of
// k8s.io/api: the deploy module builds Helm against v0.37 and keeps each
// render as a golden file (deploy/testdata/rendered, checked there against
// a fresh render), and this module reads those same files with v0.36. A
// field that only 1.37 knows, or one 1.36 dropped, fails here.
package kube136

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// operatorGroup's kinds (ServiceMonitor, PrometheusRule) are the
// Prometheus Operator's, not k8s.io/api's; the deploy module decodes them
// into the operator's own types.
const operatorGroup = "monitoring.coreos.com"

var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}()

func TestDecodeStrictlyIntoKubernetes136(t *testing.T) {
	renders, _ := filepath.Glob("../testdata/rendered/*.yaml")
	if len(renders) == 0 {
		t.Fatalf("no renders in ../testdata/rendered; the deploy module's TestChart* tests write them with -update")
	}
	manifests, _ := filepath.Glob("../kubernetes/*.yaml")
	for _, path := range append(renders, manifests...) {
		if filepath.Base(path) == "kustomization.yaml" {
			continue
		}
		t.Run(strings.TrimPrefix(path, "../"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			kinds := decodeAll(t, data)
			if len(kinds) == 0 {
				t.Fatalf("%s holds no object", path)
			}
		})
	}
}

// TestDecodeRefusesUnknownFields keeps the check honest: the decoder must
// refuse a field 1.36 does not have and a duplicate key.
func TestDecodeRefusesUnknownFields(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown-field", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {sessionAfinity: None}\n", `unknown field "spec.sessionAfinity"`},
		{"duplicate-key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: one}\ndata: {b: two}\n", `"data" already set`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decoder.Decode([]byte(tc.doc), nil, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode = %v, want an error containing %s", err, tc.want)
			}
		})
	}
}

func decodeAll(t *testing.T, data []byte) []schema.GroupVersionKind {
	t.Helper()
	var kinds []schema.GroupVersionKind
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return kinds
		}
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := utilyaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if head.Kind == "" {
			continue // comments only
		}
		if strings.HasPrefix(head.APIVersion, operatorGroup+"/") {
			continue
		}
		_, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decoding strictly into k8s.io/api v0.36: %v\n%s", err, doc)
		}
		kinds = append(kinds, *gvk)
	}
}
