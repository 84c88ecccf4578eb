package demo

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the service's OpenAPI 3.1 description, written by hand to
// match its routes; `gateway import openapi` turns it into the
// bundled catalog's tools.
//
//go:embed openapi.yaml
var OpenAPI []byte

// OpenAPIPath is where the service serves [OpenAPI], without a token or a
// workspace: a description is not tenant data.
const OpenAPIPath = "/openapi.yaml"

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeReply(w, fail(http.StatusMethodNotAllowed, "method not allowed", r.Method+" is not allowed on "+OpenAPIPath))
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodGet {
		_, _ = w.Write(OpenAPI)
	}
}
