package demo

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var placeholder = regexp.MustCompile(`\{[^}]*\}`)

// Every route the service answers is described in openapi.yaml, and every
// operation described is a route it answers.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                               `yaml:"openapi"`
		Paths   map[string]map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	var described []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			described = append(described, strings.ToUpper(method)+" "+placeholder.ReplaceAllString(path, "{}"))
		}
	}
	served := []string{"GET " + OpenAPIPath}
	for _, r := range New(Options{ServiceToken: "svc"}).routeList() {
		served = append(served, placeholder.ReplaceAllString(r.pattern, "{}"))
	}
	slices.Sort(described)
	slices.Sort(served)
	for _, r := range served {
		if !slices.Contains(described, r) {
			t.Errorf("route %s is not described in openapi.yaml", r)
		}
	}
	for _, d := range described {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.yaml describes %s, which the service does not answer", d)
		}
	}
}

func TestOpenAPIServedWithoutToken(t *testing.T) {
	srv := httptest.NewServer(New(Options{ServiceToken: "svc"}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/yaml" || string(body) != string(OpenAPI) {
		t.Errorf("GET %s = %d %q, %d bytes; want 200 application/yaml with the document", OpenAPIPath, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	resp, err = http.Post(srv.URL+OpenAPIPath, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s = %d, want 405", OpenAPIPath, resp.StatusCode)
	}
}
