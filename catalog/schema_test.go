package catalog

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

// decodeArgs decodes arguments the way the gateway does: encoding/json
// with UseNumber.
func decodeArgs(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

const searchTool = `  - name: search
    description: Search.
    input:
      type: object
      properties:
        state: { type: string, enum: [Enqueued, Running, Succeeded, Failed, Cancelled] }
        job_id: { type: string, minLength: 3 }
        page_size: { type: integer, minimum: 1, maximum: 100 }
        ratio: { type: number, exclusiveMaximum: 1 }
        tags: { type: array, items: { type: string }, maxItems: 2 }
        filter:
          type: object
          properties: { queue: { type: string, pattern: "^[a-z]+$" } }
          required: [queue]
          additionalProperties: false
        when: { type: string, format: date-time }
        limit: { anyOf: [ { type: integer }, { type: "null" } ] }
        count: { type: [integer, "null"] }
      required: [job_id]
      additionalProperties: false
    request: { upstream: svc, path: "/jobs/{job_id}" }
`

func TestSchemaValidationMessages(t *testing.T) {
	c := mustParse(t, base+searchTool, nil)
	s := c.Tool("search").Schema
	for _, tt := range []struct {
		name, args string
		want       string // "" for valid
		field      string
	}{
		{"valid", `{"job_id": "abc", "page_size": 20, "ratio": 0.5, "state": "Running"}`, "", ""},
		{"integer-as-json-number", `{"job_id": "abc", "page_size": 100}`, "", ""},
		{"integral-float-is-integer", `{"job_id": "abc", "page_size": 2.0}`, "", ""},
		{"nil-is-no-arguments", ``, `argument "job_id": missing required argument`, "job_id"},
		{"missing-required", `{}`, `argument "job_id": missing required argument`, "job_id"},
		{"unexpected", `{"job_id": "abc", "ws": "other-tenant"}`, `unexpected argument "ws"`, "ws"},
		{"enum", `{"job_id": "abc", "state": "Paused"}`,
			`argument "state": value must be one of "Enqueued", "Running", "Succeeded", "Failed", "Cancelled"`, "state"},
		{"type", `{"job_id": 42}`, `argument "job_id": want string, got number`, "job_id"},
		{"fraction-is-not-integer", `{"job_id": "abc", "page_size": 2.5}`, `argument "page_size": want integer, got number`, "page_size"},
		{"minimum", `{"job_id": "abc", "page_size": 0}`, `argument "page_size": must be at least 1`, "page_size"},
		{"maximum", `{"job_id": "abc", "page_size": 101}`, `argument "page_size": must be at most 100`, "page_size"},
		{"exclusive-maximum", `{"job_id": "abc", "ratio": 1}`, `argument "ratio": must be less than 1`, "ratio"},
		{"min-length", `{"job_id": "ab"}`, `argument "job_id": must be at least 3 characters long`, "job_id"},
		{"max-items", `{"job_id": "abc", "tags": ["a", "b", "c"]}`, `argument "tags": must have at most 2 items`, "tags"},
		{"nested-item-type", `{"job_id": "abc", "tags": ["a", 1]}`, `argument "tags[1]": want string, got number`, "tags[1]"},
		{"nested-required", `{"job_id": "abc", "filter": {}}`, `argument "filter.queue": missing required argument`, "filter.queue"},
		{"nested-unexpected", `{"job_id": "abc", "filter": {"queue": "q", "x": 1}}`, `unexpected argument "filter.x"`, "filter.x"},
		{"pattern", `{"job_id": "abc", "filter": {"queue": "Q1"}}`, `argument "filter.queue": must match the pattern "^[a-z]+$"`, "filter.queue"},
		{"format-asserted", `{"job_id": "abc", "when": "yesterday"}`, `argument "when":`, "when"},
		{"alternatives-joined", `{"job_id": "abc", "limit": "x"}`, `argument "limit": want integer, got string, or want null, got string`, "limit"},
		{"null-alternative", `{"job_id": "abc", "limit": null}`, "", ""},
		{"not-an-object", `[1, 2]`, `arguments: want object, got array`, ""},
		// An integer must fit int64, however it is spelt.
		{"int64-max", `{"job_id": "abc", "count": 9223372036854775807}`, "", ""},
		{"int64-min", `{"job_id": "abc", "count": -9223372036854775808}`, "", ""},
		{"integral-float-in-int64", `{"job_id": "abc", "count": 9.2e18}`, "", ""},
		{"integer-past-int64", `{"job_id": "abc", "count": 9223372036854775808}`,
			`argument "count": must be an integer from -9223372036854775808 to 9223372036854775807`, "count"},
		{"integral-float-past-int64", `{"job_id": "abc", "count": 1e+19}`,
			`argument "count": must be an integer from -9223372036854775808 to 9223372036854775807`, "count"},
		{"integral-float-below-int64", `{"job_id": "abc", "count": -9.3e18}`, `argument "count": must be an integer from`, "count"},
		{"integer-alternative-past-int64", `{"job_id": "abc", "limit": 1e19}`, `argument "limit": must be an integer from`, "limit"},
		// Exactly ±2^63 spelt as floats: -2^63 is int64's minimum, 2^63 is one
		// past its maximum.
		{"float-minus-2^63", `{"job_id": "abc", "count": -9.223372036854775808e18}`, "", ""},
		{"float-2^63", `{"job_id": "abc", "count": 9.223372036854775808e18}`, `argument "count": must be an integer from`, "count"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var args any
			if tt.args != "" {
				args = decodeArgs(t, tt.args)
			}
			err := s.Validate(args)
			if tt.want == "" {
				if err != nil {
					t.Errorf("Validate(%s) = %v, want nil", tt.args, err)
				}
				return
			}
			var ae *ArgumentError
			if !errors.As(err, &ae) || !strings.HasPrefix(err.Error(), tt.want) || ae.Field != tt.field {
				t.Errorf("Validate(%s) = %v, want *ArgumentError %q for field %q", tt.args, err, tt.want, tt.field)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Validate(%s) = %q, want one line", tt.args, err)
			}
		})
	}
}

func TestSchemaIsSafeForConcurrentUse(t *testing.T) {
	c := mustParse(t, base+searchTool, nil)
	s := c.Tool("search").Schema
	good, bad := decodeArgs(t, `{"job_id": "abc"}`), decodeArgs(t, `{"job_id": 1}`)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if err := s.Validate(good); err != nil {
					t.Errorf("goroutine %d: Validate(good) = %v", i, err)
					return
				}
				if err := s.Validate(bad); err == nil {
					t.Errorf("goroutine %d: Validate(bad) = nil", i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestSchemaRefsStayInside(t *testing.T) {
	for _, tt := range []struct {
		name, ref string
		ok        bool
	}{
		{"local-defs", "#/$defs/id", true},
		{"remote-url", "https://example.com/schema.json", false},
		{"relative-file", "other.json", false},
		{"file-url", "file:///etc/passwd", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := base + `  - name: a
    description: A.
    input:
      type: object
      $defs: { id: { type: string } }
      properties: { id: { $ref: "` + tt.ref + `" } }
    request: { upstream: svc, path: /a }
`
			_, err := Parse("c.yaml", []byte(src), nil)
			if (err == nil) != tt.ok {
				t.Errorf("Parse($ref %q) = %v, want ok=%t", tt.ref, err, tt.ok)
			}
		})
	}
}

func TestIntegerRangeHoldsInEveryDraft(t *testing.T) {
	for _, draft := range []string{"", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema"} {
		src := base + `  - name: t
    description: T.
    input:
      $schema: "` + draft + `"
      type: object
      properties: { n: { type: integer }, x: { type: number }, o: { oneOf: [ { type: integer }, { type: string } ] } }
    request: { upstream: svc, path: /t }
`
		if draft == "" {
			src = strings.Replace(src, `      $schema: ""`+"\n", "", 1)
		}
		s := mustParse(t, src, nil).Tool("t").Schema
		for args, ok := range map[string]bool{
			`{"n": 9223372036854775807}`: true,
			`{"n": 1e+19}`:               false,
			`{"o": 1e+19}`:               false,
			`{"x": 1e+19}`:               true,
		} {
			if err := s.Validate(decodeArgs(t, args)); (err == nil) != ok {
				t.Errorf("draft %q: Validate(%s) = %v, want ok %v", draft, args, err, ok)
			}
		}
	}
}
