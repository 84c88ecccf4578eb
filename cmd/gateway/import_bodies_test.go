package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/gateway/authz"
	"github.com/mcpgw/gateway/catalog"
	"github.com/mcpgw/gateway/openapi"
	"github.com/mcpgw/gateway/proxy"
)

// Stripe declares an optional form body that may hold nothing
// ({type: object, properties: {}, additionalProperties: false}) on every
// GET and DELETE; the import skipped all of them (234 of Stripe's 452
// operations) as a form with no fields. Such a body is no body: the
// operation imports with only its parameters and sends nothing, while a
// DELETE whose optional form body has fields keeps them as arguments. A
// GET's optional body with fields is left out too, with a note, as the
// gateway sends no body with a GET.
func TestImportTakesAnEmptyOptionalBodyAsNone(t *testing.T) {
	d, err := openapi.Read([]byte(`openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /v1/customers/{customer}:
    get:
      operationId: GetCustomersCustomer
      parameters:
        - { name: customer, in: path, required: true, schema: { type: string } }
      requestBody:
        required: false
        content:
          application/x-www-form-urlencoded:
            encoding: {}
            schema: { type: object, properties: {}, additionalProperties: false }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
    delete:
      operationId: DeleteCustomersCustomer
      parameters:
        - { name: customer, in: path, required: true, schema: { type: string } }
      requestBody:
        required: false
        content:
          application/x-www-form-urlencoded:
            schema: { type: object, properties: { invoice_now: { type: boolean } }, additionalProperties: false }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /v1/coupons/{coupon}:
    delete:
      operationId: DeleteCouponsCoupon
      parameters:
        - { name: coupon, in: path, required: true, schema: { type: string } }
      requestBody:
        required: false
        content:
          application/x-www-form-urlencoded:
            schema: { type: object, properties: {}, additionalProperties: false }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /v1/balance:
    get:
      operationId: GetBalance
      requestBody:
        content:
          application/json:
            schema: { type: object, properties: {}, additionalProperties: false }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /v1/search:
    get:
      operationId: SearchThings
      parameters:
        - { name: q, in: query, schema: { type: string } }
      requestBody:
        content:
          application/json:
            schema: { type: object, properties: { filter: { type: string } } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /v1/report:
    get:
      operationId: GetReport
      requestBody:
        required: true
        content:
          application/json:
            schema: { type: object, properties: { range: { type: string } } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(d, openapi.Options{Upstream: "u", IncludeWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	// A GET's required body cannot be sent; an optional one is left out,
	// with a note, and the GET still reads.
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "/v1/report" {
		t.Fatalf("skipped %v, want only GET /v1/report", res.Skipped)
	}
	if !strings.Contains(string(res.YAML), "optional request body left out: the gateway sends no body with GET") {
		t.Errorf("no note on the GET's optional body:\n%s", res.YAML)
	}
	up, seen := recordingUpstream(t)
	cat, core := loadImported(t, res, map[string]string{"U_URL": up.URL})
	for _, name := range []string{"get_customers_customer", "get_balance", "search_things"} {
		tool := cat.Tool(name)
		if tool == nil {
			t.Fatalf("%s was not imported:\n%s", name, res.YAML)
		}
		if in := string(tool.InputJSON); tool.Kind != catalog.KindRead || strings.Contains(in, `"body"`) || strings.Contains(in, `"filter"`) {
			t.Errorf("%s: kind %s, input %s; want a read with no body argument", name, tool.Kind, tool.InputJSON)
		}
	}
	if in := string(cat.Tool("delete_customers_customer").InputJSON); !strings.Contains(in, `"invoice_now"`) {
		t.Errorf("the DELETE lost its form field: %s", in)
	}
	if tool := cat.Tool("delete_coupons_coupon"); tool == nil || tool.Request.Body != nil {
		t.Errorf("the DELETE whose body can hold nothing: %v", tool)
	}
	p := authz.NewPrincipal("agent", "", "", []string{"u:write"}, nil)
	for _, c := range []struct{ tool, args string }{
		{"get_customers_customer", `{"customer":"cus_1"}`},
		{"get_balance", `{}`},
		{"search_things", `{"q":"x"}`},
		{"delete_customers_customer", `{"customer":"cus_1","invoice_now":true}`},
		{"delete_coupons_coupon", `{"coupon":"c1"}`},
	} {
		if r, err := core.Call(context.Background(), p, c.tool, []byte(c.args)); err != nil || r.IsError {
			t.Fatalf("call %s: %v %s", c.tool, err, r.Text)
		}
	}
	got := seen()
	want := []seenRequest{
		{"GET", "/v1/customers/cus_1", "", ""},
		{"GET", "/v1/balance", "", ""},
		{"GET", "/v1/search", "", ""},
		{"DELETE", "/v1/customers/cus_1", "application/x-www-form-urlencoded", "invoice_now=true"},
		{"DELETE", "/v1/coupons/c1", "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("upstream saw %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// seenRequest is what a recording upstream saw of one request.
type seenRequest struct{ method, path, contentType, body string }

// recordingUpstream answers every request with {"ok":true} and records
// it; seen gives what it has recorded so far, in order.
func recordingUpstream(t *testing.T) (up *httptest.Server, seen func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var got []seenRequest
	up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seenRequest{r.Method, r.URL.Path, r.Header.Get("Content-Type"), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(up.Close)
	return up, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// loadImported loads an import of upstream "u" as a catalog that
// includes it (HS256 tokens, a u_write gate for scope u:write) with env
// as the environment, and a core serving it.
func loadImported(t *testing.T, res *openapi.Result, env map[string]string) (*catalog.Catalog, *proxy.Core) {
	t.Helper()
	env["SECRET"] = strings.Repeat("s", 32)
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	main := "version: 1\nserver: { name: t }\nauth:\n  jwt: { hmac_secret_env: SECRET, algorithms: [HS256], issuer: iss, audience: aud }\ngates:\n  u_write: { scopes: [u:write] }\ninclude: [u.yaml]\n"
	dir := t.TempDir()
	for name, body := range map[string][]byte{"catalog.yaml": []byte(main), "u.yaml": res.YAML} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := catalog.Load(filepath.Join(dir, "catalog.yaml"), &catalog.LoadOptions{Getenv: getenv})
	if err != nil {
		t.Fatalf("imported catalog does not load: %v\n%s", err, res.YAML)
	}
	core, err := proxy.New(cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cat, core
}

// Stripe's forms and queries send objects as bracketed fields (the
// deepObject style): address[city]=Paris, line_items[0][price]=p_1,
// expand[]=customer, created[gte]=1700000000. Such a form field or query
// parameter is imported as an argument of its type, listed under the
// request's brackets, and reaches the upstream spread that way, where it
// used to be left out (or, required, to skip the operation). An object
// field with no such encoding is still left out.
func TestImportSendsDeepObjectFieldsInBrackets(t *testing.T) {
	d, err := openapi.Read([]byte(`openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://api.example.com" } ]
paths:
  /v1/items?filter[type]=invoice:
    get:
      operationId: ListInvoiceItems
      parameters:
        - { name: filter, in: query, style: deepObject, explode: true, schema: { type: object, properties: { type: { type: string } } } }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /v1/checkout/sessions:
    post:
      operationId: PostCheckoutSessions
      parameters:
        - name: created
          in: query
          style: deepObject
          explode: true
          schema: { anyOf: [ { type: object, properties: { gte: { type: integer } } }, { type: integer } ] }
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            encoding:
              address: { style: deepObject, explode: true }
              line_items: { style: deepObject, explode: true }
              expand: { style: deepObject, explode: true }
            schema:
              type: object
              required: [line_items]
              properties:
                mode: { type: string }
                address: { type: object, properties: { city: { type: string }, line1: { type: string } } }
                line_items: { type: array, items: { type: object, properties: { price: { type: string }, quantity: { type: integer } } } }
                expand: { type: array, items: { type: string } }
                extra: { type: object }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(d, openapi.Options{Upstream: "u", IncludeWrites: true})
	if err != nil || len(res.Skipped) != 0 {
		t.Fatalf("Import: %v, skipped %v", err, res.Skipped)
	}
	if y := string(res.YAML); !strings.Contains(y, "brackets: [address, created, expand, line_items]") || !strings.Contains(y, `form field "extra" left out`) {
		t.Errorf("want brackets: [address, created, expand, line_items] and extra left out:\n%s", y)
	}
	// A deepObject under which the document's path fixes a field
	// (filter[type]=invoice) is left out: its spread could set it again.
	if y := string(res.YAML); !strings.Contains(y, `query parameter "filter" left out: the operation sets a field over or under it`) || strings.Contains(y, "brackets: [filter]") {
		t.Errorf("want filter left out:\n%s", y)
	}
	var got, gotQuery url.Values
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		got, gotQuery = r.PostForm, r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"cs_1"}`))
	}))
	defer up.Close()
	_, core := loadImported(t, res, map[string]string{"U_URL": up.URL})
	p := authz.NewPrincipal("agent", "", "", []string{"u:write"}, nil)
	args := `{"created":{"gte":1700000000},"mode":"payment","address":{"city":"Paris","line1":"1 rue X&Y=Z"},"line_items":[{"price":"p_1","quantity":2},{"price":"p_2","quantity":1}],"expand":["customer","invoice"]}`
	if r, err := core.Call(context.Background(), p, "post_checkout_sessions", []byte(args)); err != nil || r.IsError {
		t.Fatalf("call: %v %s", err, r.Text)
	}
	want := url.Values{
		"mode":                    {"payment"},
		"address[city]":           {"Paris"},
		"address[line1]":          {"1 rue X&Y=Z"},
		"line_items[0][price]":    {"p_1"},
		"line_items[0][quantity]": {"2"},
		"line_items[1][price]":    {"p_2"},
		"line_items[1][quantity]": {"1"},
		"expand[]":                {"customer", "invoice"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("upstream got form %v, want %v", got, want)
	}
	if want := (url.Values{"created[gte]": {"1700000000"}}); !reflect.DeepEqual(gotQuery, want) {
		t.Errorf("upstream got query %v, want %v", gotQuery, want)
	}
}

// A text request body (Orthanc's metadata values and log levels, given
// as text/plain with a schema that only describes them; Zuora's CSV
// file) imports as one string argument, body, sent as it is with the
// document's media type (UTF-8, as the argument is); those operations
// used to be skipped. An optional one defaults to the empty string,
// which sends an empty body. The first text type described as a string
// is the one sent; a body that no text type describes as a string (an
// object, a choice that may be one) is still skipped: the gateway would
// not know how to write it.
func TestImportSendsTextBodies(t *testing.T) {
	d, err := openapi.Read([]byte(`openapi: 3.0.3
info: { title: t, version: "1" }
servers: [ { url: "https://pacs.example.com" } ]
components:
  schemas:
    Program: { type: object, properties: { name: { type: string } } }
paths:
  /instances/{id}/metadata/{name}:
    put:
      summary: Set metadata
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
        - { name: name, in: path, required: true, schema: { type: string } }
      requestBody:
        content:
          text/plain:
            schema: { description: String value of the metadata }
      responses: { "200": { description: ok } }
  /objects/jobs/{id}/files:
    post:
      operationId: uploadJobFile
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
      requestBody:
        required: true
        content:
          text/csv:
            schema: { type: string, nullable: true, description: The CSV file to be uploaded }
      responses: { "200": { description: ok, content: { application/json: { schema: { type: object } } } } }
  /transforms:
    post:
      operationId: transform
      requestBody:
        required: true
        content:
          text/plain:
            schema: { $ref: "#/components/schemas/Program" }
          text/xml:
            schema: { type: string }
      responses: { "200": { description: ok } }
  /schedules:
    post:
      operationId: createSchedule
      requestBody:
        required: true
        content:
          text/plain:
            schema: { type: object, properties: { name: { type: string } } }
      responses: { "200": { description: ok } }
  /programs:
    post:
      operationId: createProgram
      requestBody:
        required: true
        content:
          text/plain:
            schema: { allOf: [ { $ref: "#/components/schemas/Program" } ] }
      responses: { "200": { description: ok } }
  /authenticate:
    post:
      operationId: authenticate
      requestBody:
        content:
          text/plain:
            schema: { type: string, minLength: 10, description: API key }
      responses: { "200": { description: ok } }
  /levels:
    put:
      operationId: setLevel
      requestBody:
        required: true
        content:
          text/plain:
            schema: { enum: [1, 2] }
      responses: { "200": { description: ok } }
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := openapi.Import(d, openapi.Options{Upstream: "u", IncludeWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, s := range res.Skipped {
		if !strings.Contains(s.Reason, "not a string") {
			t.Errorf("skipped %s %s: %s", s.Method, s.Path, s.Reason)
		}
		skipped = append(skipped, s.Path)
	}
	if want := []string{"/levels", "/programs", "/schedules"}; !reflect.DeepEqual(skipped, want) {
		t.Fatalf("skipped %v, want %v: their text bodies are not strings", skipped, want)
	}
	up, seen := recordingUpstream(t)
	cat, core := loadImported(t, res, map[string]string{"U_URL": up.URL})
	var names []string
	for _, tool := range cat.Tools {
		names = append(names, tool.Name)
	}
	p := authz.NewPrincipal("agent", "", "", []string{"u:write"}, nil)
	for _, c := range []struct{ tool, args string }{
		{"put_instances_by_id_metadata_by_name", `{"id":"a1b2","name":"1024","body":"reviewed by dr. lee\n"}`},
		{"put_instances_by_id_metadata_by_name", `{"id":"a1b2","name":"1025"}`},
		{"upload_job_file", `{"id":"j9","body":"name,qty\nbolt,12\n"}`},
		{"transform", `{"body":"<a>1</a>"}`},
	} {
		if cat.Tool(c.tool) == nil {
			t.Fatalf("%s was not imported (tools %v):\n%s", c.tool, names, res.YAML)
		}
		if r, err := core.Call(context.Background(), p, c.tool, []byte(c.args)); err != nil || r.IsError {
			t.Fatalf("call %s: %v %s", c.tool, err, r.Text)
		}
	}
	// A required body is the agent's to give, and so is an optional one
	// that cannot be empty: without it the call is refused before
	// anything is sent.
	for name, args := range map[string]string{"upload_job_file": `{"id":"j9"}`, "authenticate": `{}`} {
		if r, err := core.Call(context.Background(), p, name, []byte(args)); err != nil || !r.IsError || !strings.Contains(r.Text, "body") {
			t.Errorf("%s: a call with no body was not refused for it: %v %+v", name, err, r)
		}
	}
	if !strings.Contains(string(res.YAML), "the optional text body is asked for: it cannot be empty") {
		t.Errorf("no note on the optional body that cannot be empty:\n%s", res.YAML)
	}
	got := seen()
	want := []seenRequest{
		{"PUT", "/instances/a1b2/metadata/1024", "text/plain; charset=utf-8", "reviewed by dr. lee\n"},
		{"PUT", "/instances/a1b2/metadata/1025", "text/plain; charset=utf-8", ""},
		{"POST", "/objects/jobs/j9/files", "text/csv; charset=utf-8", "name,qty\nbolt,12\n"},
		{"POST", "/transforms", "text/xml; charset=utf-8", "<a>1</a>"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("upstream saw %+v, want %+v", got, want)
	}
}
